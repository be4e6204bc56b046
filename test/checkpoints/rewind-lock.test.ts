/**
 * The rewind lock (issue 38): a rewind inside a running runtime is refused, naming the run, while
 * a live run can write a root the checkpoint covers — the same root, a folder inside it or around
 * it, reached through a symlink or a trailing slash — and goes ahead for the look-alikes that
 * cannot: a read-only root, a sibling whose name starts with the root's, a run with no roots. A
 * dry run is never locked; a checkpoint of another run is not found when asked for one run's.
 */
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunStatus } from '../../store/index.ts';
import { Checkpointer, CheckpointNotFoundError } from '../../runtime/checkpoints/index.ts';
import { blockingRun, RewindBlockedError, Rewinds, type LiveRunRoots } from '../../runtime/runs/rewinds.ts';
import { openTemp } from '../store/helpers.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-rewind-lock-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const project = join(base, 'proj');
const state = join(base, 'state');
mkdirSync(join(project, 'src'), { recursive: true });
mkdirSync(join(base, 'proj-evil'));
mkdirSync(state);
symlinkSync(project, join(base, 'via-link'));

const live = (
  path: string,
  access: 'read' | 'read-write' = 'read-write',
  status: RunStatus = 'running',
): LiveRunRoots => ({ runId: 'agent:run-live', status, roots: [{ id: 'r', path, access }] });

describe('which live run blocks a rewind of a root', () => {
  it.each([
    ['the same root', project],
    ['the root with a trailing slash', `${project}/`],
    ['a folder inside the root', join(project, 'src')],
    ['a folder around the root', base],
    ['the root through a symlink', join(base, 'via-link')],
  ])('blocks: a live run that can write %s', (_what, path) => {
    expect(blockingRun([live(path)], [project])).toMatchObject({ runId: 'agent:run-live', root: project });
  });

  it.each([
    ['a read-only root', live(project, 'read')],
    ['a sibling whose name starts with the root’s', live(join(base, 'proj-evil'))],
    ['a sibling folder', live(state)],
    ['a run with no roots', { runId: 'agent:run-none', status: 'running' as const, roots: [] }],
  ])('lets through: a live run with %s', (_what, run) => {
    expect(blockingRun([run], [project])).toBeNull();
  });
});

describe('a rewind inside a running runtime', () => {
  writeFileSync(join(project, 'a.txt'), 'one\n');
  const checkpoints = new Checkpointer(state, () => 1_700_000_000_000);
  const roots = [{ id: 'project', path: project }];
  const taken = checkpoints.take(
    { runId: 'agent:run-1', callId: 'c1', sessionId: 's', tool: 'shell' },
    roots,
  );
  writeFileSync(join(project, 'a.txt'), 'ONE\n');
  let liveRuns: LiveRunRoots[] = [];
  // A store per case (openTemp closes it after the case).
  const open = () => {
    const { store } = openTemp();
    return {
      store,
      rewinds: new Rewinds({
        stateDir: state,
        now: () => 1_700_000_001_000,
        store,
        liveRuns: () => liveRuns,
        clusterNode: null,
      }),
    };
  };
  const who = { user: 'sidecar:me', surface: 'sidecar' };
  const id = taken.record.id;

  it('is refused while a live run waits for a human with the root writable, naming the run; a dry run is not', () => {
    liveRuns = [live(join(project, 'src'), 'read-write', 'waiting_for_approval')];
    const { store, rewinds } = open();
    let refused: unknown = null;
    try {
      rewinds.rewind(id, { ...who, dryRun: false });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RewindBlockedError);
    expect((refused as RewindBlockedError).code).toBe('rewind_blocked_by_run');
    expect((refused as Error).message).toContain('run agent:run-live is waiting for a human');
    expect((refused as Error).message).toContain(project);
    expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('ONE\n');
    expect(store.audit.list().filter((e) => e.kind === 'rewind')).toHaveLength(0);
    const dry = rewinds.rewind(id, { ...who, dryRun: true });
    expect(dry.changes).toEqual([expect.objectContaining({ path: 'a.txt', change: 'modified' })]);
    expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('ONE\n');
  });

  it('a checkpoint asked for as another run’s is not found', () => {
    liveRuns = [];
    const { rewinds } = open();
    expect(() => rewinds.rewind(id, { ...who, dryRun: true, ofRun: 'agent:run-2' })).toThrow(
      CheckpointNotFoundError,
    );
  });

  it('goes ahead once no live run can write the root: restored, audited with the surface and user, undo listed with the run', () => {
    liveRuns = [live(join(base, 'proj-evil'))];
    const { store, rewinds } = open();
    const done = rewinds.rewind(id, { ...who, dryRun: false, ofRun: 'agent:run-1' });
    expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('one\n');
    const events = store.audit.list().filter((e) => e.kind === 'rewind');
    expect(events).toEqual([
      expect.objectContaining({ surface: 'sidecar', runId: 'agent:run-1', callId: 'c1', status: 'restored' }),
    ]);
    expect(events[0]?.detail).toMatchObject({ checkpoint: id, undo: done.undo, by: 'sidecar:me' });
    const listed = rewinds.list({ runId: 'agent:run-1' }).map((c) => [c.id, c.tool]);
    expect(listed).toEqual([
      [id, 'shell'],
      [done.undo, 'rewind'],
    ]);
    rewinds.rewind(String(done.undo), { ...who, dryRun: false, ofRun: 'agent:run-1' });
    expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('ONE\n');
  });
});
