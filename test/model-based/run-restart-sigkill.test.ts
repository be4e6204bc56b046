// The sampled subset of the model-based restart tests in real processes: a child runs a scenario
// and SIGKILLs itself at a crash point of its effects (the same points the in-process suite
// freezes at); a fresh child restores the run from the SQLite file and finishes it; the
// invariants are checked on what both left on disk. A different sample every run; the seed is
// in the test name so a failure can be replayed with SNOTRA_MBT_SEED.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunContext, RunOutcome } from '../../machines/run/types.ts';
import { openStore, Redactor } from '../../store/index.ts';
import { RestartHarness } from './harness.ts';
import { check, scenarios } from './run-scenarios.ts';
import { childNodeArgs } from '../support/child-scripts.ts';
import { cappedRuns } from '../support/laws.ts';

/** Pairs per run: 5 (two processes each); the deep mode takes 100× that, up to 200. */
const SAMPLES = cappedRuns(5, 200);
const seed = Number(process.env.SNOTRA_MBT_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** A small deterministic generator (mulberry32), so a seed replays the same sample. */
function rng(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function child(dir: string, mode: 'kill' | 'resume', name: string, k: number) {
  return spawnSync(
    process.execPath,
    [...childNodeArgs(join(import.meta.dirname, 'run-restart-child.ts')), dir, mode, name, String(k)],
    { encoding: 'utf8', timeout: 120_000, killSignal: 'SIGKILL' },
  );
}

describe('model-based restart tests in real processes killed with SIGKILL (sampled)', () => {
  it(`seed ${seed}: ${SAMPLES} sampled crash points, each killed and resumed in a fresh process, keep the invariants`, async () => {
    // Count each scenario's crash points in-process (cheap), then sample scenario × point pairs.
    const h = await RestartHarness.create();
    const points = new Map<string, number>();
    try {
      for (const s of scenarios()) points.set(s.name, (await h.run(s, `${s.name}:count`, null)).points);
    } finally {
      h.close();
    }
    const next = rng(seed);
    const list = scenarios().filter((s) => (points.get(s.name) ?? 0) > 0);
    let killed = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const s = list[Math.floor(next() * list.length)]!;
      const k = 1 + Math.floor(next() * (points.get(s.name) as number));
      const where = `${s.name} crash point ${k} (seed ${seed})`;
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-mbt-kill-')));
      try {
        const first = child(dir, 'kill', s.name, k);
        // A child past its timeout is SIGKILLed too (a blocked worker would hang the suite): that is no crash point.
        expect(first.error, `${where}: the child did not end in time; ${first.stderr}`).toBeUndefined();
        // The last await point may come after the run ended for good: then the process exits itself.
        if (first.signal === 'SIGKILL') killed++;
        else expect(first.stdout, `${where}: ${first.stderr}`).toMatch(/^done /);
        const runId = `${s.name}:kill${k}`;
        let outcome: RunOutcome;
        if (first.signal === 'SIGKILL') {
          const second = child(dir, 'resume', s.name, k);
          expect(
            second.error,
            `${where}: the resumed child did not end in time; ${second.stderr}`,
          ).toBeUndefined();
          expect(second.status, `${where}: ${second.stderr}`).toBe(0);
          expect(second.stdout).toMatch(/^done /);
        }
        const store = openStore({ path: join(dir, 'state', 'snotra.db'), redactor: new Redactor() });
        try {
          const ctx = (store.snapshots.get(runId)?.snapshot as { context?: RunContext } | undefined)?.context;
          outcome = ctx?.outcome as RunOutcome;
          expect(outcome, `${where}: no outcome persisted`).toBeDefined();
          check(store, s, runId, { outcome, record: RestartHarness.executionsIn(dir), context: ctx ?? null });
        } finally {
          store.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    // Most sampled points fall before the end of a run: a sample that never killed anything tested nothing.
    expect(killed).toBeGreaterThan(0);
  }, 600_000);
});
