// Bus latency on the embedded nats-server: envelope publish→subscribe round trip and request/reply
// (both with zod validation on receipt), sequential, one connection.
// Run: npx tsx bench/bus.bench.ts   — prints JSON (BUS_BENCH_N sets the sample count, default 5000).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { connectBus, defineKinds, startEmbeddedNats, subject } from '../runtime/bus/index.ts';
import { summarize } from './stats.ts';

const N = Number(process.env.BUS_BENCH_N ?? 5000);
const WARMUP = 500;

const kinds = defineKinds({
  'bench.ping': z.strictObject({ seq: z.number().int(), text: z.string() }),
  'bench.pong': z.strictObject({ seq: z.number().int() }),
});

const stateDir = mkdtempSync(join(tmpdir(), 'snotra-bus-bench-'));
const t0 = performance.now();
const nats = await startEmbeddedNats({ stateDir });
const startMs = performance.now() - t0;
const bus = await connectBus({ target: nats.target(), kinds, source: 'bench' });

const round = (ms: number): number => Math.round(ms * 1000) / 1000;
const report = (samples: number[]) => {
  const s = summarize(samples);
  return { medianMs: round(s.median), p99Ms: round(s.p99), minMs: round(s.min), maxMs: round(s.max), n: s.n };
};

// 1. publish → own subscription (envelope encode + validate on both sides).
const pubSubject = subject('bench', 'pubsub');
let wake: (() => void) | undefined;
bus.subscribe(pubSubject, 'bench.ping', () => wake?.());
await bus.flush();
const pubsub: number[] = [];
for (let i = 0; i < N + WARMUP; i++) {
  const delivered = new Promise<void>((r) => (wake = r));
  const start = performance.now();
  bus.publish(pubSubject, 'bench.ping', { seq: i, text: 'hello bus' });
  await delivered;
  if (i >= WARMUP) pubsub.push(performance.now() - start);
}

// 2. request/reply.
const rpcSubject = subject('bench', 'rpc');
bus.subscribe(rpcSubject, 'bench.ping', (env, ctx) => ctx.reply('bench.pong', { seq: env.payload.seq }));
await bus.flush();
const rpc: number[] = [];
for (let i = 0; i < N + WARMUP; i++) {
  const start = performance.now();
  await bus.request(rpcSubject, 'bench.ping', { seq: i, text: 'hello bus' }, { expect: 'bench.pong' });
  if (i >= WARMUP) rpc.push(performance.now() - start);
}

// 3. Throughput of fire-and-forget publishes to a subscribed subject (validated on receipt).
const tpSubject = subject('bench', 'throughput');
const TP = 50_000;
let got = 0;
const allIn = new Promise<void>((r) =>
  bus.subscribe(tpSubject, 'bench.ping', () => {
    if (++got === TP) r();
  }),
);
await bus.flush();
const tpStart = performance.now();
for (let i = 0; i < TP; i++) bus.publish(tpSubject, 'bench.ping', { seq: i, text: 'hello bus' });
await allIn;
const tpMs = performance.now() - tpStart;

const stats = bus.stats();
await bus.close();
const stopStart = performance.now();
await nats.stop();
const stopMs = performance.now() - stopStart;
rmSync(stateDir, { recursive: true, force: true });

console.log(
  JSON.stringify(
    {
      node: process.version,
      server: 'nats-server (embedded, loopback, token auth)',
      embeddedStartMs: round(startMs),
      embeddedStopMs: round(stopMs),
      publishToSubscriberRoundTrip: report(pubsub),
      requestReply: report(rpc),
      publishThroughput: { messages: TP, perSecond: Math.round(TP / (tpMs / 1000)) },
      invalid: Object.values(stats.invalid).reduce((a, b) => a + b, 0),
    },
    null,
    2,
  ),
);
