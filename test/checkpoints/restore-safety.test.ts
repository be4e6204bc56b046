/**
 * Checkpoints and rewinds against a hostile tree (issue 38): a symlink in the root pointing
 * outside never makes a restore write outside the root — also when a folder or a file was swapped
 * for such a symlink between the checkpoint and the restore — a tampered tree object naming `..`
 * or a path is refused, and a checkpoint id that is a path is refused before anything is read.
 * The benign look-alikes (a symlink pointing inside, names starting with dots, a well-formed id
 * that is not there) work. Plus: which calls take a checkpoint (a read-only one takes none),
 * the exclusion rule listed in the checkpoint, and the prefilter (only changed files are hashed).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../policy/decision.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { Checkpointer, mayChangeRoots, rootsToCheckpoint } from '../../runtime/checkpoints/index.ts';
import { ObjectStore, sha256, treeHash } from '../../runtime/checkpoints/objects.ts';
import { rewindTo } from '../../runtime/checkpoints/rewind.ts';
import { coarseTimestamps, treeOf } from './support.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-rewind-safety-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/** A fresh root, an outside folder with a victim file, and a state dir. */
function setup() {
  const dir = join(base, String(n++));
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  const state = join(dir, 'state');
  for (const d of [root, outside, state]) mkdirSync(d, { recursive: true });
  writeFileSync(join(outside, 'victim.txt'), 'untouched\n');
  const checkpoints = new Checkpointer(state, () => 1_700_000_000_000);
  const take = () =>
    checkpoints.take({ runId: 'r', callId: 'c', sessionId: 's', tool: 'shell' }, [
      { id: 'root', path: root },
    ]);
  const rewind = (id: string, dryRun = false) =>
    rewindTo(state, id, { dryRun, now: () => 1_700_000_000_001 });
  return { root, outside, state, checkpoints, take, rewind, outsideTree: () => treeOf(outside) };
}

const decision = (
  risk: Decision['risk'],
  roots: (string | null)[] = [],
): Pick<Decision, 'risk' | 'targets'> => ({
  risk,
  targets: roots.map((root) => ({ argument: 'path', input: 'x', resolved: '/x', root, access: null })),
});
const roots: WorkspaceRoot[] = [
  { id: 'p', path: '/w/p', access: 'read-write', primary: true, source: 'workspace' },
  { id: 'q', path: '/w/q', access: 'read-write', primary: false, source: 'workspace' },
  { id: 'nested', path: '/w/p/sub', access: 'read-write', primary: false, source: 'workspace' },
  { id: 'docs', path: '/w/docs', access: 'read', primary: false, source: 'workspace' },
];

describe('which calls take a checkpoint', () => {
  it('read-only and external calls take none; writes, shell and git_query do', () => {
    expect(mayChangeRoots('read_file', decision('read'))).toBe(false);
    expect(mayChangeRoots('search_files', decision('read'))).toBe(false);
    expect(mayChangeRoots('http_request', decision('external'))).toBe(false);
    expect(mayChangeRoots('mcp:fs:read', decision('read'))).toBe(false);
    expect(mayChangeRoots('request_directory_access', decision('write-local'))).toBe(false);
    expect(mayChangeRoots('write_file', decision('write-local'))).toBe(true);
    expect(mayChangeRoots('mcp:fs:write', decision('write-local'))).toBe(true);
    expect(mayChangeRoots('shell', decision('exec'))).toBe(true);
    expect(mayChangeRoots('git_query', decision('read'))).toBe(true);
  });

  it('a write checkpoints its target’s root; shell every read-write root (not read ones, not nested twice)', () => {
    expect(rootsToCheckpoint('write_file', decision('write-local', ['q']), roots).map((r) => r.id)).toEqual([
      'q',
    ]);
    expect(rootsToCheckpoint('shell', decision('exec'), roots).map((r) => r.id)).toEqual(['p', 'q']);
    expect(rootsToCheckpoint('mcp:x:y', decision('write-local', [null]), roots).map((r) => r.id)).toEqual([
      'p',
      'q',
    ]);
    expect(
      rootsToCheckpoint(
        'git_query',
        decision('read'),
        roots.filter((r) => r.access === 'read'),
      ),
    ).toEqual([]);
    expect(rootsToCheckpoint('read_file', decision('read', ['p']), roots)).toEqual([]);
  });

  it('a read-only call writes nothing to the state dir', () => {
    const s = setup();
    const taken = s.checkpoints.beforeCall(
      { runId: 'r', callId: 'c', sessionId: 's', tool: 'read_file' },
      decision('read', ['root']),
      [{ id: 'root', path: s.root, access: 'read-write', primary: true, source: 'workspace' }],
    );
    expect(taken).toBeNull();
    expect(readdirSync(s.state)).toEqual([]);
  });
});

describe('incremental checkpoints and the exclusion rule', () => {
  it('hashes only changed files, stores only changed bytes, and lists what it excludes', () => {
    const s = setup();
    for (let i = 0; i < 200; i++) writeFileSync(join(s.root, `f${i}.txt`), `file ${i}\n`);
    mkdirSync(join(s.root, 'node_modules/pkg'), { recursive: true });
    writeFileSync(join(s.root, 'node_modules/pkg/index.js'), 'x');
    mkdirSync(join(s.root, 'secret'));
    writeFileSync(join(s.root, 'secret/key.txt'), 'k');
    writeFileSync(join(s.root, 'big.bin'), '');
    truncateSync(join(s.root, 'big.bin'), 10 * 1024 * 1024 + 1);
    writeFileSync(join(s.root, 'exactly-10mb.bin'), '');
    truncateSync(join(s.root, 'exactly-10mb.bin'), 10 * 1024 * 1024);
    // Coarse timestamps with a tick the test advances: the files written just now settle once a
    // tick has passed (racily clean before: racy-timestamps.test.ts).
    const coarse = coarseTimestamps();
    const checkpoints = new Checkpointer(s.state, () => 1_700_000_000_000, { fs: coarse.fs });
    const take = () =>
      checkpoints.take({ runId: 'r', callId: 'c', sessionId: null, tool: 'shell' }, [
        { id: 'root', path: s.root, deny: ['./secret'] },
      ]);
    const first = take();
    expect(first.hashed).toBe(201);
    coarse.tick();
    expect(take().hashed).toBe(201);
    expect(first.record.roots[0]?.excluded).toEqual([
      { path: 'big.bin', reason: 'over_10mb' },
      { path: 'node_modules', reason: 'node_modules' },
      { path: 'secret', reason: 'denied' },
    ]);
    writeFileSync(join(s.root, 'f3.txt'), 'changed\n');
    writeFileSync(join(s.root, 'f7.txt'), 'changed too\n');
    const second = take();
    expect(second.hashed).toBe(2);
    // Two new contents (20 bytes) plus the root's tree object: not the 10 MB file, not 200 files.
    expect(second.storedBytes).toBeLessThan(40_000);
    expect(second.storedBytes).toBeGreaterThan(19);
    // Excluded paths are left as they are by a rewind.
    writeFileSync(join(s.root, 'node_modules/pkg/index.js'), 'changed');
    writeFileSync(join(s.root, 'secret/key.txt'), 'rotated');
    s.rewind(first.record.id);
    expect(readFileSync(join(s.root, 'node_modules/pkg/index.js'), 'utf8')).toBe('changed');
    expect(readFileSync(join(s.root, 'secret/key.txt'), 'utf8')).toBe('rotated');
    expect(existsSync(join(s.root, 'big.bin'))).toBe(true);
    expect(readFileSync(join(s.root, 'f3.txt'), 'utf8')).toBe('file 3\n');
  });
});

describe('a restore never writes outside the root', () => {
  it('a symlink pointing outside at checkpoint time is restored as a link; the outside is untouched', () => {
    const s = setup();
    symlinkSync(s.outside, join(s.root, 'out'));
    const ck = s.take();
    writeFileSync(join(s.outside, 'victim.txt'), 'changed outside by the user\n');
    const outsideNow = s.outsideTree();
    rmSync(join(s.root, 'out'));
    s.rewind(ck.record.id);
    expect(readlinkSync(join(s.root, 'out'))).toBe(s.outside);
    expect(s.outsideTree()).toEqual(outsideNow);
  });

  it('a folder swapped for a symlink to the outside after the checkpoint: the folder comes back, nothing is written outside', () => {
    const s = setup();
    mkdirSync(join(s.root, 'sub'));
    writeFileSync(join(s.root, 'sub/victim.txt'), 'restored content\n');
    const ck = s.take();
    const want = treeOf(s.root);
    rmSync(join(s.root, 'sub'), { recursive: true });
    symlinkSync(s.outside, join(s.root, 'sub'));
    const outsideBefore = s.outsideTree();
    s.rewind(ck.record.id);
    expect(s.outsideTree()).toEqual(outsideBefore);
    expect(treeOf(s.root)).toEqual(want);
  });

  it('a file swapped for a symlink to an outside file: the link is replaced, not written through', () => {
    const s = setup();
    writeFileSync(join(s.root, 'notes.txt'), 'mine\n');
    const ck = s.take();
    rmSync(join(s.root, 'notes.txt'));
    symlinkSync(join(s.outside, 'victim.txt'), join(s.root, 'notes.txt'));
    s.rewind(ck.record.id);
    expect(readFileSync(join(s.outside, 'victim.txt'), 'utf8')).toBe('untouched\n');
    expect(readFileSync(join(s.root, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(treeOf(s.root)['notes.txt']).toMatch(/^file /);
  });

  it('a mode-only change on a file swapped for a link does not chmod the link’s target', () => {
    const s = setup();
    writeFileSync(join(s.root, 'run.sh'), 'untouched\n', { mode: 0o755 });
    const ck = s.take();
    rmSync(join(s.root, 'run.sh'));
    symlinkSync(join(s.outside, 'victim.txt'), join(s.root, 'run.sh'));
    const before = s.outsideTree();
    s.rewind(ck.record.id);
    expect(s.outsideTree()).toEqual(before);
    expect(treeOf(s.root)['run.sh']).toMatch(/^file 755 /);
  });

  it('the root itself swapped for a symlink: refused as root_moved, the outside untouched', () => {
    const s = setup();
    writeFileSync(join(s.root, 'a.txt'), 'a\n');
    const ck = s.take();
    rmSync(s.root, { recursive: true });
    symlinkSync(s.outside, s.root);
    const before = s.outsideTree();
    expect(() => s.rewind(ck.record.id)).toThrow(expect.objectContaining({ code: 'root_moved' }));
    expect(s.outsideTree()).toEqual(before);
  });

  it.each([['..'], ['.'], ['../outside'], ['a/../../outside'], ['x\u0000y'], ['']])(
    'a tree object naming %j is refused as corrupt_checkpoint before anything is written',
    (evil) => {
      const s = setup();
      writeFileSync(join(s.root, 'a.txt'), 'a\n');
      const ck = s.take();
      const store = new ObjectStore(s.state);
      const data = Buffer.from('pwned\n');
      store.putBlob(sha256(data), data);
      // A tree written the way the store writes one (so its hash matches), holding the evil name.
      const tampered = {
        v: 1 as const,
        entries: [{ name: evil, type: 'file' as const, mode: 0o644, size: 6, hash: sha256(data) }],
      };
      const { hash, text } = treeHash(tampered);
      mkdirSync(join(s.state, 'checkpoints/objects', hash.slice(0, 2)), { recursive: true });
      writeFileSync(join(s.state, 'checkpoints/objects', hash.slice(0, 2), hash.slice(2)), text);
      const record = { ...ck.record, roots: ck.record.roots.map((r) => ({ ...r, tree: hash })) };
      writeFileSync(join(s.state, 'checkpoints/records', `${ck.record.id}.json`), JSON.stringify(record));
      const before = s.outsideTree();
      const rootBefore = treeOf(s.root);
      expect(() => s.rewind(ck.record.id)).toThrow(expect.objectContaining({ code: 'corrupt_checkpoint' }));
      expect(s.outsideTree()).toEqual(before);
      expect(treeOf(s.root)).toEqual(rootBefore);
    },
  );

  it.each([
    ['../../etc/passwd'],
    ['/tmp/x'],
    ['ck-../../outside'],
    ['ck-00000000-0000000g'],
    ['ck-00000000-00000000/../../x'],
    ['CK-00000000-00000000'],
  ])('a checkpoint id %j that is no id is refused as invalid_checkpoint_id', (id) => {
    const s = setup();
    expect(() => s.rewind(id)).toThrow(expect.objectContaining({ code: 'invalid_checkpoint_id' }));
    expect(() => s.rewind(id, true)).toThrow(expect.objectContaining({ code: 'invalid_checkpoint_id' }));
  });

  it('benign look-alikes restore fine: a link pointing inside, dotted names, a well-formed id not there', () => {
    const s = setup();
    mkdirSync(join(s.root, 'real-docs'));
    writeFileSync(join(s.root, 'real-docs/readme.md'), '# docs\n');
    symlinkSync('./real-docs', join(s.root, 'docs'));
    writeFileSync(join(s.root, '..hidden'), 'dots\n');
    mkdirSync(join(s.root, '...'));
    writeFileSync(join(s.root, '.../x'), 'three dots\n');
    const ck = s.take();
    const want = treeOf(s.root);
    rmSync(join(s.root, 'docs'));
    rmSync(join(s.root, '..hidden'));
    rmSync(join(s.root, '...'), { recursive: true });
    writeFileSync(join(s.root, 'real-docs/readme.md'), 'edited through the link\n');
    s.rewind(ck.record.id);
    expect(treeOf(s.root)).toEqual(want);
    expect(() => s.rewind('ck-00000000-00000000')).toThrow(
      expect.objectContaining({ code: 'checkpoint_not_found' }),
    );
  });
});
