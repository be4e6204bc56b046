/**
 * The prefilter's racy-timestamp gap (issue 38), closed as git closes it: a file whose mtime or
 * ctime is not strictly older than the start of the scan that recorded it is racily clean and is
 * read again by the next scan, not trusted. On a file system with coarse timestamps (modelled
 * with a tick the test advances, `coarseTimestamps`), a file rewritten at the same size in the
 * tick of the checkpoint that recorded it, its mtime put back with `utimes` (or not), keeps its
 * whole stat; it is still seen, and a rewind to that checkpoint gives its contents back. The
 * look-alikes: files last changed in an earlier tick are not read again, an entry settles once a
 * tick has passed, and the prefilter file keeps only settled files (a version-1 file, which could
 * hold racy entries, is not read). On the real file system a file stamped in the future is never
 * trusted.
 */
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
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
import { rewindTo } from '../../runtime/checkpoints/rewind.ts';
import { coarseTimestamps } from './support.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-ck-racy-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
let clock = 1_700_000_000_000;
const now = () => clock++;
const meta = { runId: 'agent:run-1', callId: 'c', sessionId: null, tool: 'shell' };

function setUp() {
  const dir = join(base, String(n++));
  const root = join(dir, 'root');
  const state = join(dir, 'state');
  mkdirSync(root, { recursive: true });
  mkdirSync(state);
  const coarse = coarseTimestamps();
  const checkpoints = new Checkpointer(state, now, { fs: coarse.fs });
  const roots = [{ id: 'root', path: root }];
  const take = () => checkpoints.take(meta, roots);
  // Two files written and checkpointed in tick 0, then settled in tick 1 (read once more).
  writeFileSync(join(root, 'old.txt'), 'old\n');
  writeFileSync(join(root, 'other.txt'), 'other\n');
  expect(take().hashed).toBe(2);
  coarse.tick();
  expect(take().hashed).toBe(2);
  expect(take().hashed).toBe(0);
  return { root, state, coarse, take, roots };
}

describe('racily clean files', () => {
  it.each([
    ['its mtime put back with utimes', true],
    ['without touching its times', false],
  ])(
    'a file rewritten at the same size in its checkpoint’s tick (%s) is read again, and a rewind gives it back',
    (_how, putBack) => {
      const s = setUp();
      const target = join(s.root, 'target.txt');
      writeFileSync(target, 'aaaa\n');
      const before = statSync(target);
      const first = s.take();
      expect(first.hashed).toBe(1);
      writeFileSync(target, 'bbbb\n');
      if (putBack) utimesSync(target, before.atime, before.mtime);
      const second = s.take();
      // Only the racily clean file: the two settled ones are not read again.
      expect(second.hashed).toBe(1);
      expect(second.record.roots[0]?.tree).not.toBe(first.record.roots[0]?.tree);
      writeFileSync(target, 'cccc\n');
      rewindTo(s.state, second.record.id, { dryRun: false, now });
      expect(readFileSync(target, 'utf8')).toBe('bbbb\n');
    },
  );

  it('an entry settles once a tick has passed, and the prefilter file keeps only settled files', () => {
    const s = setUp();
    writeFileSync(join(s.root, 'new.txt'), 'new\n');
    expect(s.take().hashed).toBe(1);
    // A process that starts now trusts the settled files only.
    const restarted = () => new Checkpointer(s.state, now, { fs: s.coarse.fs }).take(meta, s.roots);
    const saved = readFileSync(join(s.state, 'checkpoints', PREFILTER_FILE), 'utf8');
    expect(saved).toContain('old.txt');
    expect(saved).not.toContain('new.txt');
    expect(restarted().hashed).toBe(1);
    s.coarse.tick();
    expect(s.take().hashed).toBe(1);
    expect(s.take().hashed).toBe(0);
  });

  it('a prefilter file of version 1 (which could hold racy entries) is not read', () => {
    const s = setUp();
    const file = join(s.state, 'checkpoints', PREFILTER_FILE);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { v: number };
    expect(saved.v).toBe(2);
    writeFileSync(file, JSON.stringify({ ...saved, v: 1 }));
    expect(new Checkpointer(s.state, now, { fs: s.coarse.fs }).take(meta, s.roots).hashed).toBe(2);
  });

  it('on the real file system, a file stamped in the future is never trusted', () => {
    const dir = join(base, String(n++));
    const root = join(dir, 'root');
    mkdirSync(root, { recursive: true });
    const checkpoints = new Checkpointer(join(dir, 'state'), now);
    const future = join(root, 'future.txt');
    writeFileSync(future, 'one\n');
    const later = new Date(statSync(future).mtimeMs + 24 * 60 * 60_000);
    utimesSync(future, later, later);
    const take = () => checkpoints.take(meta, [{ id: 'root', path: root }]);
    expect(take().hashed).toBe(1);
    expect(take().hashed).toBe(1);
    writeFileSync(future, 'two\n');
    utimesSync(future, later, later);
    const taken = take();
    expect(taken.hashed).toBe(1);
    writeFileSync(future, 'three\n');
    rewindTo(join(dir, 'state'), taken.record.id, { dryRun: false, now });
    expect(readFileSync(future, 'utf8')).toBe('two\n');
  });
});
