/**
 * The prefilter kept between processes (issue 38): a restarted runtime (a new `Checkpointer` on
 * the same state dir) hashes only the files that changed, and its checkpoint is exactly the one
 * a scan from nothing makes. The evasions of a stat-only prefilter are read again: contents
 * changed with the mtime put back, a same-size file renamed over another, a mode change, an
 * entry whose contents were swept from the store. A prefilter file that is damaged, of another
 * version or of another root is ignored (every file hashed), never trusted.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../runtime/checkpoints/index.ts';
import { PREFILTER_FILE } from '../../runtime/checkpoints/prefilter-file.ts';
import { coarseTimestamps } from './support.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-prefilter-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const meta = { runId: 'agent:run-1', callId: 'c', sessionId: null, tool: 'shell' };
let n = 0;
const now = () => 1_700_000_000_000 + n++;
// Coarse timestamps with a tick the tests advance, so which files are racily clean (read again
// by the next scan: racy-timestamps.test.ts) does not depend on the kernel's clock.
const coarse = coarseTimestamps();
const checkpointer = (state: string) => new Checkpointer(state, now, { fs: coarse.fs });

/** A root of `count` files in two folders, and a state dir with one checkpoint of it. */
function setUp(
  name: string,
  count = 40,
): { root: string; state: string; roots: { id: string; path: string }[] } {
  const root = join(base, name, 'root');
  const state = join(base, name, 'state');
  for (const d of ['a', 'b']) mkdirSync(join(root, d), { recursive: true });
  mkdirSync(state);
  for (let i = 0; i < count; i++) writeFileSync(join(root, i % 2 ? 'a' : 'b', `f${i}.txt`), `file ${i}\n`);
  const roots = [{ id: 'root', path: root }];
  // Written in this tick: racily clean at the first checkpoint, settled at the next one.
  const checkpoints = checkpointer(state);
  checkpoints.take(meta, roots);
  coarse.tick();
  checkpoints.take(meta, roots);
  return { root, state, roots };
}

/** The tree a scan from nothing gives (a state dir of its own). */
function fresh(name: string, roots: { id: string; path: string }[]): string {
  const state = mkdtempSync(join(base, `${name}-fresh-`));
  return new Checkpointer(state, now).take(meta, roots).record.roots[0]?.tree ?? '';
}

describe('the prefilter kept between processes', () => {
  it('a restarted runtime hashes only what changed, and its checkpoint is exact', () => {
    const { root, state, roots } = setUp('restart');
    expect(readFileSync(join(state, 'checkpoints', PREFILTER_FILE), 'utf8')).toContain('f1.txt');
    writeFileSync(join(root, 'a', 'f1.txt'), 'changed\n');
    writeFileSync(join(root, 'b', 'new.txt'), 'new\n');
    const taken = checkpointer(state).take(meta, roots);
    expect(taken.files).toBe(41);
    expect(taken.hashed).toBe(2);
    expect(taken.record.roots[0]?.tree).toBe(fresh('restart', roots));
  });

  it('reads again what a stat-only prefilter could miss: mtime put back, a same-size file renamed over, a mode change', () => {
    const { root, state, roots } = setUp('evasions');
    const target = join(root, 'a', 'f1.txt');
    const before = statSync(target);
    writeFileSync(target, 'FILE 1\n');
    utimesSync(target, before.atime, before.mtime);
    writeFileSync(join(root, 'a', 'other.txt'), 'file 3\n');
    renameSync(join(root, 'a', 'other.txt'), join(root, 'a', 'f3.txt'));
    chmodSync(join(root, 'b', 'f0.txt'), 0o600);
    const taken = checkpointer(state).take(meta, roots);
    expect(taken.hashed).toBe(3);
    expect(taken.record.roots[0]?.tree).toBe(fresh('evasions', roots));
  });

  it('an entry whose contents left the store is read and stored again', () => {
    const { state, roots } = setUp('swept', 4);
    checkpointer(state).store.sweep(new Set());
    const taken = checkpointer(state).take(meta, roots);
    expect(taken.hashed).toBe(4);
    expect(taken.record.roots[0]?.tree).toBe(fresh('swept', roots));
  });

  it.each([
    ['not JSON', '{"v":2,'],
    ['another version', '{"v":3,"roots":[]}'],
    ['a malformed entry', '{"v":2,"roots":[{"path":"/x","files":[["f",1,2,3,4,5,"nothex"]]}]}'],
  ])('a prefilter file that is %s is ignored: every file is hashed', (_what, text) => {
    const { root, state, roots } = setUp(`damaged-${n}`, 6);
    writeFileSync(join(state, 'checkpoints', PREFILTER_FILE), text);
    writeFileSync(join(root, 'a', 'f1.txt'), 'changed\n');
    const taken = checkpointer(state).take(meta, roots);
    expect(taken.hashed).toBe(6);
    expect(taken.record.roots[0]?.tree).toBe(fresh(`damaged-${n}`, roots));
  });

  it('another root’s entries are not used for this one (a look-alike path)', () => {
    const { state } = setUp('lookalike', 4);
    const other = join(base, 'lookalike', 'root-2');
    mkdirSync(other);
    writeFileSync(join(other, 'x.txt'), 'x\n');
    const taken = checkpointer(state).take(meta, [{ id: 'r2', path: other }]);
    expect(taken.hashed).toBe(1);
  });
});
