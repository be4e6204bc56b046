/**
 * The rewind lock's gaps (issue 38): a runtime whose live runs the rewind cannot see must not be
 * rewound under. A runtime embedded in another process (`snotra run`, `snotra chat`, an app) holds
 * the state dir's lock but serves no join socket: the CLI's own rewind is refused while the lock
 * is held, and holds the lock itself while it restores. A cluster node cannot see another node's
 * live run on the same root: a rewind there is refused, from the runtime and from the CLI. Dry
 * runs are never refused; the look-alikes (a lock on another state dir, a runtime that has
 * stopped, a stale pid file, a single node) rewind.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../runtime/checkpoints/index.ts';
import { RewindBusyError, RewindInClusterError, rewindCheckpoint } from '../../runtime/control/rewind.ts';
import { CLUSTER_FILE, RUNTIME_FILE } from '../../runtime/runtime-file.ts';
import { Rewinds } from '../../runtime/runs/rewinds.ts';
import { acquireStateLock } from '../../runtime/state-lock.ts';
import { openTemp } from '../store/helpers.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-rewind-gaps-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A state dir with one checkpoint of a root whose file changed since; the root and the id. */
function setUp(name: string): { state: string; file: string; id: string } {
  const root = join(base, name, 'proj');
  const state = join(base, name, 'state');
  mkdirSync(root, { recursive: true });
  mkdirSync(state);
  const file = join(root, 'a.txt');
  writeFileSync(file, 'one\n');
  const taken = new Checkpointer(state, () => 1_700_000_000_000).take(
    { runId: 'agent:run-1', callId: 'c1', sessionId: null, tool: 'shell' },
    [{ id: 'proj', path: root }],
  );
  writeFileSync(file, 'ONE\n');
  return { state, file, id: taken.record.id };
}

function refusal(act: () => unknown): Error & { code?: string } {
  try {
    act();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a refusal');
}

describe('the CLI’s rewind beside a runtime it cannot ask', () => {
  it('is refused while a runtime holds the state dir (an embedded one: no join socket), naming it; a dry run is not', () => {
    const { state, file, id } = setUp('embedded');
    const held = acquireStateLock(state);
    try {
      const err = refusal(() => rewindCheckpoint(state, id, { dryRun: false }));
      expect(err).toBeInstanceOf(RewindBusyError);
      expect(err.code).toBe('rewind_blocked_by_runtime');
      expect(err.message).toContain(`pid ${process.pid}`);
      expect(err.message).toContain(state);
      expect(readFileSync(file, 'utf8')).toBe('ONE\n');
      const dry = rewindCheckpoint(state, id, { dryRun: true });
      expect(dry.changes).toEqual([expect.objectContaining({ path: 'a.txt', change: 'modified' })]);
      expect(readFileSync(file, 'utf8')).toBe('ONE\n');
    } finally {
      held.release();
    }
  });

  it('holds the state dir while it restores, and lets it go after', () => {
    const { state, file, id } = setUp('holds');
    const done = rewindCheckpoint(state, id, { dryRun: false });
    expect(readFileSync(file, 'utf8')).toBe('one\n');
    expect(done.undo).not.toBeNull();
    // Released: a runtime can start (take the lock) again, and a second rewind goes ahead.
    acquireStateLock(state).release();
    rewindCheckpoint(state, String(done.undo), { dryRun: false });
    expect(readFileSync(file, 'utf8')).toBe('ONE\n');
  });

  it('look-alikes rewind: a runtime on another state dir, one that has stopped, a stale pid file', () => {
    const { state, file, id } = setUp('lookalikes');
    const other = join(base, 'lookalikes', 'other-state');
    mkdirSync(other);
    const elsewhere = acquireStateLock(other);
    acquireStateLock(state).release();
    writeFileSync(join(state, RUNTIME_FILE), JSON.stringify({ pid: 2 ** 22 + 17, startedAt: 1 }));
    try {
      rewindCheckpoint(state, id, { dryRun: false });
      expect(readFileSync(file, 'utf8')).toBe('one\n');
    } finally {
      elsewhere.release();
    }
  });

  it('is refused on a cluster node’s state dir (other nodes’ runs are not visible); a dry run is not', () => {
    const { state, file, id } = setUp('cluster-cli');
    writeFileSync(join(state, CLUSTER_FILE), JSON.stringify({ nodeId: 'node-b' }));
    const err = refusal(() => rewindCheckpoint(state, id, { dryRun: false }));
    expect(err).toBeInstanceOf(RewindInClusterError);
    expect(err.code).toBe('rewind_in_cluster');
    expect(err.message).toContain('cluster node node-b');
    expect(readFileSync(file, 'utf8')).toBe('ONE\n');
    expect(rewindCheckpoint(state, id, { dryRun: true }).changes).toHaveLength(1);
    rmSync(join(state, CLUSTER_FILE));
    rewindCheckpoint(state, id, { dryRun: false });
    expect(readFileSync(file, 'utf8')).toBe('one\n');
  });
});

describe('a rewind inside a cluster node', () => {
  it('is refused with no live run of its own on the root, naming the node and why; a dry run and a single node are not', () => {
    const { state, file, id } = setUp('cluster-runtime');
    const { store } = openTemp();
    const rewinds = (clusterNode: string | null) =>
      new Rewinds({ stateDir: state, now: () => 1_700_000_001_000, store, liveRuns: () => [], clusterNode });
    const who = { user: 'sidecar:me', surface: 'sidecar' };
    const err = refusal(() => rewinds('node-a').rewind(id, { ...who, dryRun: false }));
    expect(err).toBeInstanceOf(RewindInClusterError);
    expect(err.code).toBe('rewind_in_cluster');
    expect(err.message).toContain('cluster node node-a');
    expect(err.message).toContain('no lock spans the nodes');
    expect(readFileSync(file, 'utf8')).toBe('ONE\n');
    expect(store.audit.list().filter((e) => e.kind === 'rewind')).toHaveLength(0);
    expect(rewinds('node-a').rewind(id, { ...who, dryRun: true }).changes).toHaveLength(1);
    rewinds(null).rewind(id, { ...who, dryRun: false });
    expect(readFileSync(file, 'utf8')).toBe('one\n');
  });
});
