/**
 * Replies under Telegram's rate limit, through the real runtime (`snotra start`) and a fake Bot
 * API on 127.0.0.1 that takes 30 messages a second and answers 429 `retry_after: 1` beyond:
 * 500 chats each write once, and each gets its one answer (the pairing instructions, a reply
 * that needs no model) — all 500 arrive, none twice, with the runtime SIGKILLed once midway.
 * A chat that blocked the bot (403) ends its reply `failed`, listed by `snotra platforms list`.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { eventually } from '../support/runtime.ts';
import { FakeTelegram } from './fake-telegram.ts';
import { botToken, cli, platformWorkspace } from './support.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const CHATS = 500;
const FIRST_CHAT = 41_000;

describe('platform replies under the rate limit', { timeout: 240_000 }, () => {
  it('500 replies at 30 messages/s: all arrive, none twice, across a SIGKILL; a blocked chat fails for good', async () => {
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
    snotra = ws.start();
    await snotra.ready();

    await eventually(
      () => new Set(fake.sent.map((m) => m.chatId)).size >= CHATS,
      180_000,
      'every chat answered',
    );
    // Settle: anything still on its way would show up as a second message.
    await new Promise((r) => setTimeout(r, 1500));
    const perChat = new Map<number, string[]>();
    for (const m of fake.sent) perChat.set(m.chatId, [...(perChat.get(m.chatId) ?? []), m.text]);
    const answers = [...perChat.values()].map((texts) => texts.filter((t) => t.includes('paired')).length);
    expect(perChat.size).toBe(CHATS);
    expect(answers.every((n) => n === 1)).toBe(true);
    expect(beforeKill).toBeLessThan(CHATS);
    expect(fake.to(blocked)).toEqual([]);

    const list = await cli(['platforms', 'list', '--state-dir', ws.stateDir, '--json']);
    const view = JSON.parse(list.stdout) as { undelivered: { key: string; status: string; error: string }[] };
    // Whatever the fake refused with 429 was sent later: the one failure is the blocked chat.
    expect(view.undelivered.filter((u) => u.status === 'failed')).toEqual([
      expect.objectContaining({ key: `telegram:${blocked}:1`, error: expect.stringContaining('403') }),
    ]);
  });
});
