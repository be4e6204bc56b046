import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeFs, type PathFs, type SnotraPathGuard } from '../../policy/paths/index.ts';
import { guardFor, makeTree, projectRoots, root, type TempTree } from './paths-tree.ts';

let tree: TempTree;
let guard: SnotraPathGuard;

beforeEach(() => {
  tree = makeTree();
  guard = guardFor(tree);
});
afterEach(() => tree.cleanup());

function resolve(input: string, access: 'read' | 'write' = 'read') {
  return guard.resolve('path', input, access, projectRoots(tree));
}

function expectResolved(input: string, expected: string, access: 'read' | 'write' = 'read'): void {
  const r = resolve(input, access);
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true, target: { resolved: expected, root: 'project' } });
}

function expectDenied(
  input: string,
  reason: string,
  ruleId?: string,
  access: 'read' | 'write' = 'read',
): void {
  const r = resolve(input, access);
  expect(r.ok, JSON.stringify(r)).toBe(false);
  if (r.ok) return;
  expect(r.reason).toBe(reason);
  if (ruleId !== undefined) expect(r.rule.id).toBe(ruleId);
}

describe('canonical paths on a real file system', () => {
  it('resolves a relative path against the primary root and fills the target', () => {
    const r = resolve('src/main.ts');
    expect(r).toMatchObject({
      ok: true,
      target: {
        argument: 'path',
        input: 'src/main.ts',
        resolved: path.join(tree.proj, 'src/main.ts'),
        root: 'project',
        access: 'read-write',
      },
    });
  });

  it('accepts the root itself, spelled in several ways', () => {
    expectResolved('.', tree.proj);
    expectResolved(tree.proj, tree.proj);
    expectResolved(`${tree.proj}/`, tree.proj);
    expectResolved('src/..', tree.proj);
  });

  it('normalizes . and .. and repeated slashes', () => {
    expectResolved('./src/./../src//main.ts', path.join(tree.proj, 'src/main.ts'));
  });

  it('refuses ../ escapes out of the root', () => {
    expectDenied('../../outside/secret.txt', 'outside_roots', 'roots.outside');
    expectDenied('src/../../proj-evil/x.txt', 'outside_roots');
    expectDenied('../../../../../../../../../../etc/hostname', 'outside_roots');
  });

  it('treats a prefix sibling as outside and a ..name child as inside', () => {
    expectDenied(path.join(tree.dir, 'w/proj-evil/x.txt'), 'outside_roots');
    expectDenied('../proj-evil', 'outside_roots');
    expectResolved('..cache/x', path.join(tree.proj, '..cache/x'), 'write');
    expectResolved('a/..b', path.join(tree.proj, 'a/..b'));
  });

  it('follows a symlink inside the root that points outside and refuses it', () => {
    tree.link('w/proj/out', tree.outside);
    expectDenied('out/secret.txt', 'outside_roots');
    expectDenied('out', 'outside_roots');
    const r = resolve('out/secret.txt');
    expect(r.ok ? null : r.target?.resolved).toBe(path.join(tree.outside, 'secret.txt'));
  });

  it('follows a relative symlink pointing outside', () => {
    tree.link('w/proj/rel-out', '../../outside');
    expectDenied('rel-out/secret.txt', 'outside_roots');
  });

  it('accepts a symlink whose target stays inside the root, resolving to the target', () => {
    tree.link('w/proj/alias', 'a/b');
    expectResolved('alias/c/d/e.txt', path.join(tree.proj, 'a/b/c/d/e.txt'));
  });

  it('follows link chains to their end', () => {
    tree.link('w/proj/l1', 'l2');
    tree.link('w/proj/l2', path.join(tree.proj, 'l3'));
    tree.link('w/proj/l3', tree.outside);
    expectDenied('l1/secret.txt', 'outside_roots');
    tree.link('w/proj/m1', 'm2');
    tree.link('w/proj/m2', 'src');
    expectResolved('m1/main.ts', path.join(tree.proj, 'src/main.ts'));
  });

  it('applies .. after a symlink to the link target, as the kernel does', () => {
    tree.link('w/proj/deep', 'a/b/c');
    expectResolved('deep/../x.txt', path.join(tree.proj, 'a/b/x.txt'), 'write');
    tree.link('w/proj/escape', path.join(tree.outside, 'sub'));
    fs.mkdirSync(path.join(tree.outside, 'sub'));
    // Lexically "escape/.." is the root itself; really it is the outside folder.
    expectDenied('escape/..', 'outside_roots');
  });

  it('refuses a dangling symlink anywhere in the path, for reads and writes', () => {
    tree.link('w/proj/dangling', path.join(tree.dir, 'nowhere'));
    expectDenied('dangling', 'invalid_path', 'roots.dangling-symlink', 'write');
    expectDenied('dangling', 'invalid_path', 'roots.dangling-symlink', 'read');
    expectDenied('dangling/new.txt', 'invalid_path', 'roots.dangling-symlink', 'write');
    tree.link('w/proj/src/dangling-rel', '../missing/file');
    expectDenied('src/dangling-rel', 'invalid_path', 'roots.dangling-symlink', 'write');
    tree.link('w/proj/to-dangling', 'dangling');
    expectDenied('to-dangling', 'invalid_path', 'roots.dangling-symlink', 'write');
  });

  it('refuses symlink loops', () => {
    tree.link('w/proj/loop-a', 'loop-b');
    tree.link('w/proj/loop-b', 'loop-a');
    tree.link('w/proj/self', 'self');
    expectDenied('loop-a', 'invalid_path', 'roots.symlink-loop');
    expectDenied('self/x', 'invalid_path', 'roots.symlink-loop', 'write');
  });

  it('resolves a new file under a symlinked folder through the link', () => {
    tree.link('w/proj/linked-src', 'src');
    expectResolved('linked-src/new/dir/file.ts', path.join(tree.proj, 'src/new/dir/file.ts'), 'write');
    tree.link('w/proj/linked-out', tree.outside);
    expectDenied('linked-out/new.txt', 'outside_roots', 'roots.outside', 'write');
  });

  it('resolves missing leaves and missing intermediate folders through the nearest existing ancestor', () => {
    expectResolved('missing/dir/file.txt', path.join(tree.proj, 'missing/dir/file.txt'), 'write');
    expectResolved('missing/../src/main.ts', path.join(tree.proj, 'src/main.ts'));
  });

  it('keeps following links after a missing part was popped by ..', () => {
    tree.link('w/proj/evil-link', tree.outside);
    expectDenied('missing/../evil-link/secret.txt', 'outside_roots');
  });

  it('refuses a file used as a directory', () => {
    expectDenied('src/main.ts/x', 'invalid_path', 'roots.not-a-directory', 'write');
    expectDenied('src/main.ts/..', 'invalid_path', 'roots.not-a-directory');
  });

  it('refuses NUL bytes, control characters, bidi overrides and empty input', () => {
    expectDenied('src/main.ts\u0000.png', 'invalid_path', 'roots.nul-byte');
    expectDenied('src/\nmain.ts', 'invalid_path', 'roots.control-character');
    expectDenied('src/\u001bmain.ts', 'invalid_path', 'roots.control-character');
    expectDenied('src/\u007fmain.ts', 'invalid_path', 'roots.control-character');
    expectDenied('src/\u0085main.ts', 'invalid_path', 'roots.control-character');
    expectDenied('src/\u202egpj.ts', 'invalid_path', 'roots.control-character');
    expectDenied('', 'invalid_path', 'roots.empty-path');
    expectDenied('a/'.repeat(3000), 'invalid_path', 'roots.path-too-long');
  });

  it('refuses a symlink whose target contains a control character', () => {
    tree.link('w/proj/ctl', 'src\nmain.ts');
    expectDenied('ctl', 'invalid_path', 'roots.control-character');
  });

  it('expands ~ and ~/x with the injected home, never ~user', () => {
    const roots = [root('home', tree.home, 'read', { primary: true })];
    expect(guard.resolve('path', '~/notes.txt', 'read', roots)).toMatchObject({
      ok: true,
      target: { resolved: path.join(tree.home, 'notes.txt'), root: 'home' },
    });
    expect(guard.resolve('path', '~', 'read', roots)).toMatchObject({
      ok: true,
      target: { resolved: tree.home },
    });
    expect(guard.resolve('path', '~root/x', 'read', roots)).toMatchObject({
      ok: false,
      reason: 'invalid_path',
      rule: { id: 'roots.tilde-user' },
    });
    // A "~" that is not the first character is an ordinary name.
    expect(guard.resolve('path', './~root', 'read', roots)).toMatchObject({
      ok: true,
      target: { resolved: path.join(tree.home, '~root') },
    });
  });

  it('never expands ~ in a symlink target (the kernel does not)', () => {
    tree.file('w/proj/~/x');
    tree.link('w/proj/tilde', '~/x');
    expectResolved('tilde', path.join(tree.proj, '~/x'), 'write');
  });

  it('canonicalizes roots given through a symlink', () => {
    const alias = tree.link('proj-alias', tree.proj);
    const roots = [root('aliased', alias, 'read-write', { primary: true })];
    expect(guard.resolve('path', 'src/main.ts', 'write', roots)).toMatchObject({
      ok: true,
      target: { resolved: path.join(tree.proj, 'src/main.ts'), root: 'aliased' },
    });
    expect(guard.resolve('path', path.join(tree.proj, 'src/main.ts'), 'read', roots)).toMatchObject({
      ok: true,
    });
    expect(guard.resolve('path', path.join(alias, 'src/main.ts'), 'read', roots)).toMatchObject({ ok: true });
  });

  it('agrees with realpath(3) (kernel semantics, not lexical) for every existing path it resolves', () => {
    tree.link('w/proj/alias', 'a/b');
    tree.link('w/proj/a/b/up', '../..');
    for (const input of ['alias/c/d/e.txt', 'alias/up/a/b/c', 'alias/../b/./c/d', 'a/b/up/alias/c']) {
      const r = resolve(input);
      expect(r.ok ? r.target.resolved : r).toBe(fs.realpathSync.native(`${tree.proj}/${input}`));
    }
  });

  it('fails closed on a component it cannot examine or a link it cannot read', () => {
    // Injected failures: the process may run as root, which can search any directory.
    const locked = tree.mkdir('w/proj/locked');
    tree.file('w/proj/locked/inner/f.txt');
    const opaque = tree.link('w/proj/opaque', 'src');
    const failing: PathFs = {
      kind: (p) => (p === locked ? 'error' : nodeFs.kind(p)),
      readlink: (p) => (p === opaque ? null : nodeFs.readlink(p)),
    };
    const g = guardFor(tree, { fs: failing });
    const roots = projectRoots(tree);
    expect(g.resolve('path', 'locked/inner/f.txt', 'read', roots)).toMatchObject({
      ok: false,
      reason: 'invalid_path',
      rule: { id: 'roots.unreadable-path' },
    });
    expect(g.resolve('path', 'opaque/main.ts', 'read', roots)).toMatchObject({
      ok: false,
      rule: { id: 'roots.unreadable-path' },
    });
    expect(g.checkSensitive('locked/inner/f.txt', 'read', roots)).toMatchObject({ reason: 'invalid_path' });
  });

  it('refuses relative input without exactly one primary root', () => {
    const none = [root('a', tree.proj, 'read-write')];
    expect(guard.resolve('path', 'src/main.ts', 'read', none)).toMatchObject({
      ok: false,
      reason: 'invalid_path',
      rule: { id: 'roots.no-primary-root' },
    });
    const two = [
      root('a', tree.proj, 'read', { primary: true }),
      root('b', tree.home, 'read', { primary: true }),
    ];
    expect(guard.resolve('path', 'src/main.ts', 'read', two)).toMatchObject({
      ok: false,
      rule: { id: 'roots.ambiguous-primary-root' },
    });
    // Absolute inputs do not need a primary root.
    expect(guard.resolve('path', path.join(tree.proj, 'src/main.ts'), 'read', none)).toMatchObject({
      ok: true,
    });
  });

  it('never throws on hostile input', () => {
    const hostile = [
      '\u0000',
      '~',
      '~~',
      '//',
      '/..',
      '....',
      '\\\\?\\C:\\x',
      'C:\\x',
      '%2e%2e/',
      'a'.repeat(5000),
    ];
    for (const input of hostile) {
      expect(() => resolve(input, 'write')).not.toThrow();
      expect(() => guard.checkSensitive(input, 'write', projectRoots(tree))).not.toThrow();
    }
  });
});
