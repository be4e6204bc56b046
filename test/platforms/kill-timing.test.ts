import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/runtime.ts';
import { stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { FakeTelegram } from './fake-telegram.ts';
import {
  botToken,
  cli,
  eventuallyAsync,
  lines,
  pairChat,
  platformWorkspace,
  type PlatformWorkspace,
} from './support.ts';

const CHAT = 4242;
let fake: FakeTelegram;
let ws: PlatformWorkspace;
let snotra: StartedProcess;

beforeAll(async () => {
  fake = await FakeTelegram.start(botToken());
  ws = platformWorkspace(fake, [{ respond: { kind: 'final', text: 'pong' } }]);
  snotra = ws.start();
  await snotra.ready();
  await pairChat(fake, ws.stateDir, CHAT);
});
afterAll(async () => {
  if (snotra !== undefined) await stopProcess(snotra);
  await fake?.close();
  if (ws !== undefined) rmSync(ws.dir, { recursive: true, force: true });
});

const pongs = () => fake.to(CHAT).filter((m) => m.text === 'pong').length;

async function undelivered(): Promise<{ key: string; status: string }[]> {
  const r = await cli(['platforms', 'list', '--state-dir', ws.stateDir, '--json']);
  return (JSON.parse(r.stdout) as { undelivered: { key: string; status: string }[] }).undelivered;
}

describe('SIGKILL at any moment between receiving a message and replying', { timeout: 300_000 }, () => {
  it('each message gets at most one reply, and exactly one unless the kill cut its send (then it is recorded unknown)', async () => {
    const delays = [0, 15, 40, 80, 150, 300, 600];
    const outcomes: string[] = [];
    for (const delay of delays) {
      const before = pongs();
      const { messageId } = fake.push(CHAT, `ping after ${delay} ms`);
      await new Promise((r) => setTimeout(r, delay));
      await stopProcess(snotra, 'SIGKILL');
      snotra = ws.start();
      await snotra.ready();
      const key = `telegram:${CHAT}:${messageId}`;
      const how = await eventuallyAsync(
        async () => {
          if (pongs() > before) return 'replied';
          return (await undelivered()).some((u) => u.key === key && u.status === 'unknown')
            ? 'unknown'
            : null;
        },
        60_000,
        `the outcome of the message sent ${delay} ms before the kill`,
      );
      outcomes.push(how);
      // Never twice, also not after another restart.
      expect(pongs() - before).toBeLessThanOrEqual(1);
    }
    const replied = pongs();
    await stopProcess(snotra, 'SIGKILL');
    const polls = fake.offsets.length;
    snotra = ws.start();
    await snotra.ready();
    await eventually(() => fake.offsets.length > polls, 20_000, 'a poll after the last restart');
    // A further restart sends nothing again; an unknown part may have arrived (at most one each).
    expect(pongs()).toBe(replied);
    expect(pongs()).toBeLessThanOrEqual(delays.length);
    expect(pongs()).toBeGreaterThanOrEqual(outcomes.filter((o) => o === 'replied').length);
    // One run per message, none repeated, none lost.
    const runs = lines<{ runId: string; status: string }>(
      (await cli(['runs', 'list', '--state-dir', ws.stateDir, '--json'])).stdout,
    );
    expect(runs).toHaveLength(delays.length);
    expect(runs.every((r) => r.status === 'completed')).toBe(true);
    expect(fake.unconfirmed).toBe(0);
    console.info(`kill outcomes: ${outcomes.join(', ')}`);
  });
});
