/**
 * Checkpoint retention (issue 38): past 30 days or beyond the newest 10,000 a checkpoint is
 * removed when the runtime starts, and so are the objects only it reached; what the kept
 * checkpoints reach stays (they still rewind exactly), and young objects are spared.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Checkpointer, CHECKPOINT_RETENTION, pruneCheckpoints } from '../../runtime/checkpoints/index.ts';
import { checkpointTime } from '../../runtime/checkpoints/retention.ts';
import { rewindTo } from '../../runtime/checkpoints/rewind.ts';
import { treeOf } from './support.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-ck-retention-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const DAY = 24 * 60 * 60_000;
const NOW = 1_800_000_000_000;

function objects(state: string): number {
  const dir = join(state, 'checkpoints/objects');
  return readdirSync(dir).reduce((sum, p) => sum + readdirSync(join(dir, p)).length, 0);
}

function setup() {
  const dir = join(base, String(n++));
  const root = join(dir, 'root');
  const state = join(dir, 'state');
  mkdirSync(root, { recursive: true });
  mkdirSync(state);
  let clock = 0;
  const checkpoints = new Checkpointer(state, () => clock);
  const take = (at: number) => {
    clock = at;
    return checkpoints.take({ runId: 'r', callId: `c${at}`, sessionId: null, tool: 'shell' }, [
      { id: 'root', path: root },
    ]).record.id;
  };
  return { root, state, checkpoints, take };
}

describe('checkpoint retention', () => {
  it('removes checkpoints older than 30 days and the objects only they reached; the rest still rewind', () => {
    const s = setup();
    writeFileSync(join(s.root, 'kept.txt'), 'shared by both\n');
    writeFileSync(join(s.root, 'old.txt'), 'only in the old one\n');
    const old = s.take(NOW - 31 * DAY);
    rmSync(join(s.root, 'old.txt'));
    writeFileSync(join(s.root, 'new.txt'), 'only in the new one\n');
    const recent = s.take(NOW - 29 * DAY);
    const want = treeOf(s.root);
    const before = objects(s.state);
    const pruned = pruneCheckpoints(s.checkpoints.store, NOW, {
      ...CHECKPOINT_RETENTION,
      sweepGraceMs: -1e15,
    });
    // The old checkpoint's root tree and old.txt's contents went; the shared file stayed.
    expect(pruned).toEqual({ removedCheckpoints: 1, removedObjects: 2 });
    expect(objects(s.state)).toBe(before - 2);
    expect(s.checkpoints.store.recordIds()).toEqual([recent]);
    expect(() => rewindTo(s.state, old, { dryRun: true, now: () => NOW })).toThrow(
      expect.objectContaining({ code: 'checkpoint_not_found' }),
    );
    writeFileSync(join(s.root, 'kept.txt'), 'changed\n');
    rewindTo(s.state, recent, { dryRun: false, now: () => NOW });
    expect(treeOf(s.root)).toEqual(want);
  });

  it('keeps only the newest maxCount, spares young objects, and does nothing when nothing is due', () => {
    const s = setup();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      writeFileSync(join(s.root, 'f.txt'), `version ${i}\n`);
      ids.push(s.take(NOW - 4 + i));
    }
    expect(ids.map(checkpointTime)).toEqual([NOW - 4, NOW - 3, NOW - 2, NOW - 1]);
    expect(pruneCheckpoints(s.checkpoints.store, NOW)).toEqual({ removedCheckpoints: 0, removedObjects: 0 });
    const before = objects(s.state);
    const pruned = pruneCheckpoints(s.checkpoints.store, NOW, {
      ...CHECKPOINT_RETENTION,
      maxCount: 2,
      sweepGraceMs: 1e15,
    });
    expect(pruned).toEqual({ removedCheckpoints: 2, removedObjects: 0 });
    expect(objects(s.state)).toBe(before);
    expect(s.checkpoints.store.recordIds()).toEqual(ids.slice(2));
  });
});
