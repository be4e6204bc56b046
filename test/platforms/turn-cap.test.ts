import { existsSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startSnotra, stopProcess } from '../support/snotra-process.ts';
import { FakeTelegram } from './fake-telegram.ts';
import { botToken, cli, lines, nthReply, pairChat, platformWorkspace } from './support.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const listStep = (i: number) => ({
  ...(i > 0 ? { expect: { kind: 'tool.result', tool: 'list_dir' } } : {}),
  respond: { kind: 'calls', calls: [{ id: `c${i}`, tool: 'list_dir', args: { path: '.' } }] },
});

describe('platform limits', { timeout: 120_000 }, () => {
  it('maxTurnsPerMessage caps the model turns of one message; the chat is told the run stopped; a group chat gets nothing', async () => {
    const fake = await FakeTelegram.start(botToken());
    cleanup.push(() => fake.close());
    // A model that would go on calling tools for ten turns.
    const ws = platformWorkspace(
      fake,
      Array.from({ length: 10 }, (_, i) => listStep(i)),
      { maxTurnsPerMessage: 2 },
    );
    cleanup.push(() => rmSync(ws.dir, { recursive: true, force: true }));
    const snotra = ws.start();
    cleanup.push(async () => void (await stopProcess(snotra)));
    await snotra.ready();
    await pairChat(fake, ws.stateDir, 9);
    // A group chat (no allowedChats lists it) gets nothing at all, before or after.
    fake.push(-100777, 'hello group bot', { type: 'group' });
    // The reply is rate-limited once (429, retry after 1 s): it is sent again after the wait, once.
    fake.rateLimitNext = 1;
    const requests = fake.sendRequests;
    fake.push(9, 'list everything, forever');
    const text = await nthReply(fake, 9, 2, 'the reply');
    expect(text).toBe('This request failed (budget_model_calls).');
    expect(fake.to(-100777)).toEqual([]);
    expect(fake.sendRequests).toBe(requests + 2);
    expect(fake.to(9)).toHaveLength(2);
    const runs = lines<{ runId: string; status: string }>(
      (await cli(['runs', 'list', '--state-dir', ws.stateDir, '--json'])).stdout,
    );
    expect(runs).toEqual([expect.objectContaining({ runId: 'bot:platform:tg:9:2', status: 'failed' })]);
    const audit = lines<{ kind: string; tool?: string }>(
      (await cli(['audit', '--state-dir', ws.stateDir, '--run', 'bot:platform:tg:9:2', '--json'])).stdout,
    );
    // Two turns: two list_dir calls completed, never a third.
    expect(audit.filter((e) => e.kind === 'completed')).toHaveLength(2);
  });

  it('a bot token missing from the secret store stops `snotra start` before anything is written, naming the field', async () => {
    const fake = await FakeTelegram.start(botToken());
    cleanup.push(() => fake.close());
    const ws = platformWorkspace(fake, []);
    cleanup.push(() => rmSync(ws.dir, { recursive: true, force: true }));
    const p = startSnotra(['start', '--config', ws.config], {});
    const code = await p.exited;
    expect(code).toBe(1);
    expect(p.stderr()).toContain(
      'surfaces.platforms[0].token: secret "tg-bot" is not set in the env secret store: set SNOTRA_SECRET_TG_BOT',
    );
    expect(p.stdout()).not.toContain('"ready"');
    expect(fake.offsets).toEqual([]);
    expect(existsSync(ws.stateDir)).toBe(false);
  });
});
