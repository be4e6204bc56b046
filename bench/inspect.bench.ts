/**
 * Live inspector latency through the real `snotra start` (sidecar on, scripted model): `PARKS`
 * one-shot scheduled tasks, `PER_SECOND` of them firing on each second, each start an unattended
 * run whose write needs approval, so it parks in the Inbox. For each, the latency is measured
 * from the approval row's `createdAt` (the runtime's clock, as the row is written) to the arrival
 * at this process (same machine clock) of the `actor.*` event on `GET /v1/events` after which
 * the tree, applied incrementally from `GET /v1/actors`, shows the run parked with its approval.
 *
 * Run: `npx tsx bench/inspect.bench.ts` (PARKS=50 PER_SECOND=5 by default). Prints one JSON document (ms).
 */
import { summarize } from './stats.ts';
import { approvalTimes, startParkScenario, untilParked } from '../test/inspect/park-scenario.ts';

const PARKS = Number(process.env.PARKS ?? 50);
const PER_SECOND = Number(process.env.PER_SECOND ?? 5);

const s = await startParkScenario({ parks: PARKS, perSecond: PER_SECOND, firstInMs: 5000 });
try {
  const arrivals = await untilParked(s, PARKS, 180_000);
  const created = await approvalTimes(s);
  const latencies = [...arrivals].map(([id, at]) => at - (created.get(id) ?? NaN));
  const st = summarize(latencies);
  const sorted = [...latencies].sort((a, b) => a - b);
  const p95 = sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))];
  console.log(
    JSON.stringify(
      { parks: PARKS, perSecond: PER_SECOND, latencyMs: { ...st, p95 }, samples: sorted },
      null,
      2,
    ),
  );
} finally {
  await s.stop();
}
