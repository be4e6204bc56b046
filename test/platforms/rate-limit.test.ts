/**
 * Replies under Telegram's rate limit, through the real runtime (`snotra start`) and a fake Bot
 * API on 127.0.0.1 that takes 30 messages a second and answers 429 `retry_after: 1` beyond:
 * 500 chats each write once, and each gets its one answer (the pairing instructions, a reply
 * that needs no model) — all 500 arrive, none twice, with the runtime SIGKILLed once midway.
 * A chat that blocked the bot (403) ends its reply `failed`, listed by `snotra platforms list`;
 * its next message gets one notice that a reply could not be delivered.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { eventually } from '../support/runtime.ts';
import { TELEGRAM_PACE } from '../../surfaces/platforms/send-pace.ts';
import { FakeTelegram } from './fake-telegram.ts';
import { botToken, cli, platformWorkspace } from './support.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const CHATS = 500;
const FIRST_CHAT = 41_000;

describe('platform replies under the rate limit', { timeout: 420_000 }, () => {
  it('500 replies at 30 messages/s across a SIGKILL: none twice, none dropped for a 429 (a part the kill cut mid-request is unknown, its chat told); a blocked chat fails for good and is told once', async () => {
    const fake = await FakeTelegram.start(botToken());
    cleanup.push(() => fake.close());
    fake.sendsPerSecond = 30;
    const blocked = FIRST_CHAT + CHATS;
    fake.blocked.add(blocked);
    const ws = platformWorkspace(fake, []);
    cleanup.push(() => rmSync(ws.dir, { recursive: true, force: true }));
    let snotra: StartedProcess = ws.start();
    cleanup.push(async () => void (await stopProcess(snotra)));
    await snotra.ready();
    for (let i = 0; i < CHATS; i++) fake.push(FIRST_CHAT + i, 'hello bot');
    fake.push(blocked, 'hello bot');

    // Midway, the runtime is killed without a chance to clean up, and started again.
    await eventually(() => fake.sent.length >= CHATS / 3, 120_000, 'a third of the replies');
    snotra.child.kill('SIGKILL');
    await snotra.exited;
    const beforeKill = fake.sent.length;
    // What the kill cut: the parts claimed `sending` (durably, just before their request) and
    // not finished. A part waiting for its turn or given back after a 429 is not among them.
    const atKill = JSON.parse(
      (await cli(['platforms', 'list', '--state-dir', ws.stateDir, '--json'])).stdout,
    ) as { undelivered: { key: string; status: string }[] };
    const claimed = atKill.undelivered
      .filter((u) => u.status === 'sending')
      .map((u) => Number(u.key.split(':')[1]))
      .sort((a, b) => a - b);
    snotra = ws.start();
    await snotra.ready();

    await eventually(
      () => new Set(fake.sent.map((m) => m.chatId)).size >= CHATS,
      240_000,
      'every chat answered',
    ).catch(async (err: unknown) => {
      // Say which chats and what their replies became: a lost reply must be traceable from the log.
      const got = new Set(fake.sent.map((m) => m.chatId));
      const missing = Array.from({ length: CHATS }, (_, i) => FIRST_CHAT + i).filter((c) => !got.has(c));
      const rows = JSON.parse(
        (await cli(['platforms', 'list', '--state-dir', ws.stateDir, '--json'])).stdout,
      ) as { undelivered: { chatId: number; status: string; error: string | null }[] };
      const of = rows.undelivered.filter((u) => missing.includes(u.chatId));
      throw new Error(
        `${(err as Error).message}: ${missing.length} chats never answered (${missing.slice(0, 10).join(', ')}…); their replies: ${JSON.stringify(of.slice(0, 10))}`,
      );
    });
    // Settle: anything still on its way would show up as a second message.
    await new Promise((r) => setTimeout(r, 1500));
    const perChat = new Map<number, string[]>();
    for (const m of fake.sent) perChat.set(m.chatId, [...(perChat.get(m.chatId) ?? []), m.text]);
    expect(perChat.size).toBe(CHATS);
    expect(beforeKill).toBeLessThan(CHATS);
    // None twice. Every answer arrived, except one whose request the kill cut in flight:
    // Telegram has no idempotency key, so such a part is `unknown`, never resent, and its chat
    // is told a reply may be missing (at most once beats twice). Exactly the parts claimed at
    // the kill are `unknown`; the pace gives at most one second's turns, and the fake answers at
    // once, so no more than that many can be claimed and unfinished.
    const list = await cli(['platforms', 'list', '--state-dir', ws.stateDir, '--json']);
    const view = JSON.parse(list.stdout) as { undelivered: { key: string; status: string; error: string }[] };
    const cut = new Set(
      view.undelivered.filter((u) => u.status === 'unknown').map((u) => Number(u.key.split(':')[1])),
    );
    const wrong = [...perChat.entries()].filter(([chat, texts]) => {
      const answers = texts.filter((t) => t.includes('paired')).length;
      const notices = texts.filter((t) => t.startsWith('A restart interrupted a reply')).length;
      if (answers > 1 || notices > 1) return true;
      if (cut.has(chat)) return notices !== 1;
      return answers !== 1 || notices !== 0;
    });
    expect(wrong).toEqual([]);
    expect([...cut].sort((a, b) => a - b)).toEqual(claimed);
    expect(claimed.length).toBeLessThanOrEqual(TELEGRAM_PACE.botPerSecond);
    // A cut part is never resent: if its answer arrived, it arrived before the kill.
    const cutAfter = fake.sent
      .slice(beforeKill)
      .filter((m) => cut.has(m.chatId) && m.text.includes('paired'));
    expect(cutAfter).toEqual([]);
    const missing = [...perChat.values()].filter((t) => !t.some((x) => x.includes('paired'))).length;
    expect(missing).toBeLessThanOrEqual(cut.size);
    expect(fake.to(blocked)).toEqual([]);

    // Whatever the fake refused with 429 was sent later: the one failure is the blocked chat.
    expect(view.undelivered.filter((u) => u.status === 'failed')).toEqual([
      expect.objectContaining({ key: `telegram:${blocked}:1`, error: expect.stringContaining('403') }),
    ]);

    // Unblocked, the chat writes again: one notice that a reply could not be delivered, then its answer.
    fake.blocked.delete(blocked);
    fake.push(blocked, 'hello again');
    await eventually(() => fake.to(blocked).length >= 2, 60_000, 'notice and answer');
    fake.push(blocked, 'and again');
    await eventually(() => fake.to(blocked).length >= 3, 60_000, 'the third answer');
    await new Promise((r) => setTimeout(r, 1000));
    const texts = fake.to(blocked).map((m) => m.text);
    expect(texts.filter((t) => t.startsWith('A reply could not be delivered'))).toHaveLength(1);
    expect(texts[0]).toMatch(/^A reply could not be delivered/);
    expect(texts).toHaveLength(3);
  });
});
