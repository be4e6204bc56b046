/**
 * The sustained rate of platform replies under Telegram's limit (issue 36). `npx tsx
 * bench/replies.bench.ts` (env `N` chats, default 300; `RUNS`, default 3; `LIMIT` messages/s the
 * fake Bot API takes, default 30). Per run: a real `snotra start` with one Telegram connection
 * against the fake Bot API on 127.0.0.1 (429 `retry_after: 1` past `LIMIT` a second), N chats
 * write once each, and each gets its one answer (pairing instructions: no model in the way).
 * Measured: the rate from the first accepted reply to the last ((N - 1) / span), the time to
 * the last, and how many sends the fake refused with 429. Prints JSON.
 */
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { stopProcess } from '../test/support/snotra-process.ts';
import { eventually } from '../test/support/runtime.ts';
import { FakeTelegram } from '../test/platforms/fake-telegram.ts';
import { botToken, platformWorkspace } from '../test/platforms/support.ts';
import { summarize } from './stats.ts';

const N = Number(process.env.N ?? 300);
const RUNS = Number(process.env.RUNS ?? 3);
const LIMIT = Number(process.env.LIMIT ?? 30);
for (const [name, v] of Object.entries({ N, RUNS, LIMIT }))
  if (!Number.isInteger(v) || v < 2)
    throw new Error(`bench/replies.bench.ts: env ${name} must be an integer ≥ 2`);

async function once(): Promise<{ rate: number; lastMs: number; refused: number; sent: number }> {
  const fake = await FakeTelegram.start(botToken());
  fake.sendsPerSecond = LIMIT;
  const ws = platformWorkspace(fake, []);
  const snotra = ws.start();
  try {
    await snotra.ready(60_000);
    const pushed = Date.now();
    for (let i = 0; i < N; i++) fake.push(90_000 + i, 'hello bot');
    await eventually(() => fake.sent.length >= N, 600_000, 'every reply');
    const first = fake.sent[0]?.at ?? pushed;
    const last = fake.sent[N - 1]?.at ?? pushed;
    return {
      rate: (N - 1) / ((last - first) / 1000),
      lastMs: last - pushed,
      refused: fake.rateLimited,
      sent: fake.sent.length,
    };
  } finally {
    await stopProcess(snotra);
    await fake.close();
    rmSync(ws.dir, { recursive: true, force: true });
  }
}

const runs: Awaited<ReturnType<typeof once>>[] = [];
const loadBefore = loadavg()[0];
for (let r = 0; r < RUNS; r++) runs.push(await once());
const round = (x: number): number => Math.round(x * 10) / 10;
const s = (k: 'rate' | 'lastMs' | 'refused') => {
  const v = summarize(runs.map((x) => x[k]));
  return { median: round(v.median), min: round(v.min), max: round(v.max) };
};
console.log(
  JSON.stringify(
    {
      bench: 'replies',
      n: N,
      runs: RUNS,
      limitPerSecond: LIMIT,
      repliesPerSecond: s('rate'),
      msToLastReply: s('lastMs'),
      refused429: s('refused'),
      duplicates: runs.map((x) => x.sent - N),
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
      load1: { before: round(loadBefore ?? 0), after: round(loadavg()[0] ?? 0) },
    },
    null,
    2,
  ),
);
