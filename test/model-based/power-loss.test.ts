// Group commit against power loss, in real processes: a child runs a scenario whose durable
// points (approval opened, decision, the approved call's `started` row) are group commits — a
// deferred transaction, then one shared fsync before the run reports or acts on it. The child is
// SIGKILLed just before or just after one of those fsyncs; the test then drops what an OS crash
// would lose (the WAL past the last completed fsync, and the shared-memory index) and a fresh
// process finishes the run. Whatever the child reported (an approval opened, a call executed)
// must still be in the store, and no external call may run twice.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunContext, RunOutcome } from '../../machines/run/types.ts';
import { openStore, Redactor } from '../../store/index.ts';
import { RestartHarness, needsApproval } from './harness.ts';
import { check, scenarios } from './run-scenarios.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const CHILD = join(import.meta.dirname, 'power-loss-child.ts');

function child(dir: string, mode: 'kill' | 'resume', name: string, k: number, when: string) {
  return spawnSync(process.execPath, [...childNodeArgs(CHILD), dir, mode, name, String(k), when], {
    encoding: 'utf8',
    timeout: 120_000,
  });
}

/** What survives an OS crash: the WAL up to the last completed fsync; the wal-index is rebuilt. */
function losePower(dir: string): void {
  const db = join(dir, 'state', 'snotra.db');
  const marker = join(dir, 'durable-wal');
  const durable = existsSync(marker) ? Number(readFileSync(marker, 'utf8')) : 0;
  if (existsSync(`${db}-wal`)) truncateSync(`${db}-wal`, durable);
  rmSync(`${db}-shm`, { force: true });
}

const lines = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

// Scenario, flush number, and whether the kill lands before or after that fsync. One approval:
// flush 1 opens it, flush 2 is the decision (the resumed call's `started` row shares it).
const CASES: Array<[string, number, 'before' | 'after']> = [
  ['approve-ok', 1, 'before'],
  ['approve-ok', 1, 'after'],
  ['approve-ok', 2, 'before'],
  ['approve-ok', 2, 'after'],
  ['approve-fail', 2, 'after'],
  ['approve-ok+approve-ok', 3, 'after'],
  ['two-steps', 2, 'after'],
];

describe('group commit survives power loss at every durable point (SIGKILL around the fsync, WAL tail dropped)', () => {
  it('an opened approval, a decision and a started call reported before the crash are all still there; no external call runs twice', () => {
    let killed = 0;
    for (const [name, k, when] of CASES) {
      const s = scenarios().find((x) => x.name === name);
      if (s === undefined) throw new Error(`no scenario ${name}`);
      const where = `${name} flush ${k} ${when}`;
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-power-loss-')));
      try {
        const first = child(dir, 'kill', name, k, when);
        if (first.signal !== 'SIGKILL') {
          expect(first.stdout, `${where}: ${first.stderr}`).toMatch(/^done /);
          continue;
        }
        killed++;
        const reportedApprovals = lines(join(dir, 'approvals.log'));
        const executedBefore = lines(join(dir, 'executions.log')).map((l) => l.split('\t')[0] ?? '');
        losePower(dir);
        // What survived the power loss, before anything runs again (a re-run would recreate the
        // same deterministic ids and hide a loss).
        const survived = openStore({ path: join(dir, 'state', 'snotra.db'), redactor: new Redactor() });
        try {
          // Reported opened before the crash: the approval was durable first.
          for (const id of reportedApprovals)
            expect(survived.approvals.get(id), `${where}: approval ${id} lost`).not.toBeNull();
          // An external call executed before the crash: its `started` row was durable first.
          for (const key of executedBefore) {
            const [, step, i] = /:s(\d+)c(\d+)$/.exec(key) ?? [];
            const kind = s.steps[Number(step)]?.[Number(i)];
            if (kind === undefined || !needsApproval(kind)) continue; // reads: NORMAL, may run again
            expect(
              survived.ledger.lookup(key),
              `${where}: ${key} ran but its started row was lost`,
            ).not.toBeNull();
            // ... and the human's decision that let it run was durable before it ran.
            const approval = reportedApprovals
              .map((id) => survived.approvals.get(id))
              .find((a) => a?.idempotencyKey === key);
            expect(approval?.status, `${where}: ${key} ran but its approval decision was lost`).toBe(
              'approved',
            );
          }
        } finally {
          survived.close();
        }
        const second = child(dir, 'resume', name, k, when);
        expect(second.status, `${where}: ${second.stderr}`).toBe(0);
        expect(second.stdout, where).toMatch(/^done /);
        const runId = `${name}:kill${k}${when}`;
        const store = openStore({ path: join(dir, 'state', 'snotra.db'), redactor: new Redactor() });
        try {
          const ctx = (store.snapshots.get(runId)?.snapshot as { context?: RunContext } | undefined)?.context;
          const outcome = ctx?.outcome as RunOutcome;
          expect(outcome, `${where}: no outcome persisted`).toBeDefined();
          check(store, s, runId, { outcome, record: RestartHarness.executionsIn(dir), context: ctx ?? null });
        } finally {
          store.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    expect(
      killed,
      'no case reached its flush: the durable points were not group commits',
    ).toBeGreaterThanOrEqual(CASES.length - 1);
  }, 600_000);
});
