/**
 * What group commit buys at the durable points of park and resume, in the store alone: C
 * concurrent writers, each doing the store work of one park (approval created, fsynced) and
 * one resume (decision, then the durable `started` row of the approved call), either
 *   - `full`: each durable point its own fsynced transaction (what the runtime does today), or
 *   - `group`: each durable point a `durable: 'deferred'` transaction followed by
 *     `await store.sync()` (one fdatasync shared by the writers waiting at the same time).
 * Both write the same rows and audit events. Prints one JSON line: per mode and concurrency,
 * parks+resumes per second (median and min–max over ROUNDS) and fsyncs per run.
 * Run: npx tsx bench/peers/group-commit.ts   (env N per round, default 1000; ROUNDS, default 5)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redactor, openStore, type Store } from '../../store/index.ts';
import { summarize } from '../stats.ts';

const N = Number(process.env.N ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

async function lifecycle(store: Store, n: number, group: boolean): Promise<void> {
  const durable = async (fn: () => void): Promise<void> => {
    if (!group) return void store.transaction(fn, { durable: true });
    store.transaction(fn, { durable: 'deferred' });
    await store.sync();
  };
  const now = Date.now();
  const id = `appr-${n}`;
  const ids = { runId: `run-${n}`, sessionId: `task:t-${n}`, agentId: 'p0', surface: 'scheduled' };
  await durable(() =>
    store.approvals.create({
      id,
      callId: `${ids.runId}:c1`,
      ...ids,
      taskId: `t-${n}`,
      tool: 'bench.notify',
      args: { channel: '#ops' },
      risk: 'external',
      reason: 'mode_ask',
      ruleId: 'mode.ask',
      idempotencyKey: `call:${ids.runId}:c1`,
      resumeCheckpoint: { runId: ids.runId, callId: 'c1', cursor: 0 },
      createdAt: now,
      expiresAt: now + 86_400_000,
    }),
  );
  await new Promise((r) => setImmediate(r)); // the human decides later
  await durable(() => {
    const r = store.approvals.decide(id, 'approved', 'bench');
    if (!r.ok) throw new Error(`decide ${id}: ${r.reason}`);
  });
  await durable(
    () =>
      void store.ledger.beginCall(
        {
          idempotencyKey: `call:${ids.runId}:c1`,
          callId: `${ids.runId}:c1`,
          ...ids,
          tool: 'bench.notify',
          risk: 'external',
          ruleId: 'mode.ask',
          resource: '#ops',
        },
        { durable: true },
      ),
  );
}

async function round(group: boolean, c: number): Promise<{ per_s: number; fsyncs_per_run: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'snotra-group-commit-'));
  const store = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
  try {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: c }, async () => {
        while (next < N) await lifecycle(store, next++, group);
      }),
    );
    const ms = performance.now() - t0;
    // `full` fsyncs 3 times per run inside SQLite; `group` counts the shared flushes.
    return { per_s: (N * 1000) / ms, fsyncs_per_run: group ? store.syncStats.flushes / N : 3 };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const load0 = loadavg();
const results: Record<string, { per_s: number[]; fsyncs_per_run: number[] }> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const c of [1, 64]) {
    for (const group of [false, true]) {
      const key = `${group ? 'group' : 'full'}_c${c}`;
      const x = await round(group, c);
      (results[key] ??= { per_s: [], fsyncs_per_run: [] }).per_s.push(x.per_s);
      results[key].fsyncs_per_run.push(x.fsyncs_per_run);
    }
  }
}
const r0 = (x: number): number => Math.round(x);
console.log(
  JSON.stringify({
    N,
    rounds: ROUNDS,
    loadavg: { start: load0, end: loadavg() },
    runs_per_s: Object.fromEntries(
      Object.entries(results).map(([k, v]) => {
        const s = summarize(v.per_s);
        const f = summarize(v.fsyncs_per_run);
        return [k, { median: r0(s.median), min: r0(s.min), max: r0(s.max), fsyncs_per_run: f.median }];
      }),
    ),
  }),
);
