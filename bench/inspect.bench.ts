/**
 * Live inspector latency through the real `snotra start` (sidecar on, scripted model): `PARKS`
 * one-shot scheduled tasks, `PER_SECOND` of them firing on each second, each start an unattended
 * run whose write needs approval, so it parks in the Inbox. For each, the latency is measured
 * from the approval row's `createdAt` (the runtime's clock, as the row is written) to the arrival
 * at this process (same machine clock) of the `actor.*` event on `GET /v1/events` after which
 * the tree, applied incrementally from `GET /v1/actors`, shows the run parked with its approval.
 *
 *
 * Before that, the in-process cost on the hot path: ns per XState inspection event handled by the
 * inspector (a run's root snapshot that changes its state, one that changes nothing shown, and an
 * event that is not a root snapshot and is dropped at once), without listeners.
 *
 * Run: `npx tsx bench/inspect.bench.ts` (PARKS=50 PER_SECOND=5 FIRST_IN_MS=10000 by default; HOT_ONLY=1 for the first part). Prints one JSON document (ms).
 */
import type { InspectionEvent } from 'xstate';
import type { RunContext } from '../machines/run/types.ts';
import { Inspector } from '../runtime/inspect/index.ts';
import { summarize } from './stats.ts';
import { approvalTimes, startParkScenario, untilParked } from '../test/inspect/park-scenario.ts';

function hotPath() {
  const ctx = {
    runId: 'worker:1',
    agentId: 'worker',
    parentRunId: null,
    interaction: 'unattended',
    budget: { modelCalls: 50, toolCalls: 100, wallTimeMs: 600_000 },
    used: { modelCalls: 3, toolCalls: 2 },
    transcript: Array.from({ length: 40 }, (_, i) => ({ role: 'user', text: `message ${i}` })),
  } as unknown as RunContext;
  const snap = (value: unknown) =>
    ({
      type: '@xstate.snapshot',
      rootId: 'x:1',
      actorRef: { sessionId: 'x:1' },
      snapshot: { status: 'active', value, context: ctx },
      event: { type: 'xstate.done.actor.0.run.running.thinking' },
    }) as unknown as InspectionEvent;
  const a = snap({ running: { acting: 'checking' } });
  const b = snap({ running: 'thinking' });
  const other = {
    type: '@xstate.microstep',
    rootId: 'x:1',
    actorRef: { sessionId: 'x:1' },
  } as unknown as InspectionEvent;
  const measure = (n: number, step: (i: number) => void) => {
    const rounds: number[] = [];
    for (let r = 0; r < 7; r += 1) {
      const t = process.hrtime.bigint();
      for (let i = 0; i < n; i += 1) step(i);
      rounds.push(Number(process.hrtime.bigint() - t) / n);
    }
    return summarize(rounds);
  };
  const inspector = new Inspector();
  return {
    changingSnapshotNs: measure(200_000, (i) => inspector.onRunInspection('worker:1', i % 2 === 0 ? a : b)),
    unchangedSnapshotNs: measure(200_000, () => inspector.onRunInspection('worker:1', a)),
    otherEventNs: measure(1_000_000, () => inspector.onRunInspection('worker:1', other)),
  };
}

const hot = hotPath();
if (process.env.HOT_ONLY === '1') {
  console.log(JSON.stringify({ hotPath: hot }, null, 2));
  process.exit(0);
}

const PARKS = Number(process.env.PARKS ?? 50);
const PER_SECOND = Number(process.env.PER_SECOND ?? 5);

const FIRST_IN_MS = Number(process.env.FIRST_IN_MS ?? 10_000);
const s = await startParkScenario({
  parks: PARKS,
  schedule: { kind: 'spread', perSecond: PER_SECOND, firstInMs: FIRST_IN_MS },
});
try {
  const arrivals = await untilParked(s, PARKS, 180_000);
  const created = await approvalTimes(s);
  const latencies = [...arrivals].map(([id, at]) => at - (created.get(id) ?? NaN));
  const st = summarize(latencies);
  const sorted = [...latencies].sort((a, b) => a - b);
  const p95 = sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))];
  console.log(
    JSON.stringify(
      { hotPath: hot, parks: PARKS, perSecond: PER_SECOND, latencyMs: { ...st, p95 }, samples: sorted },
      null,
      2,
    ),
  );
} finally {
  await s.stop();
}
