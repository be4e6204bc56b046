import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { ReasonCode, RuleRef, Target } from '../../policy/decision.ts';
import type { PathResolution } from '../../policy/seams.ts';
import { guardFor, makeTree, root, type TempTree } from './paths-tree.ts';

let tree: TempTree;

beforeEach(() => {
  tree = makeTree();
});
afterEach(() => tree.cleanup());

function check(input: string, access: 'read' | 'write', roots: WorkspaceRoot[]) {
  return guardFor(tree).resolve('path', input, access, roots);
}

describe('root enforcement', () => {
  it('lets reads use any root but writes only a read-write root', () => {
    const roots = [
      root('project', tree.proj, 'read-write', { primary: true }),
      root('home', tree.home, 'read', { source: 'user-grant' }),
    ];
    const notes = path.join(tree.home, 'notes.txt');
    expect(check(notes, 'read', roots)).toMatchObject({ ok: true, target: { root: 'home', access: 'read' } });
    expect(check(notes, 'write', roots)).toMatchObject({
      ok: false,
      reason: 'read_only_root',
      rule: { id: 'roots.read-only', source: 'roots' },
      target: { resolved: notes, root: 'home', access: 'read' },
    });
    expect(check('src/main.ts', 'write', roots)).toMatchObject({ ok: true, target: { root: 'project' } });
  });

  it('denies a write to a new file in a read-only root', () => {
    const roots = [root('docs', tree.proj, 'read', { primary: true })];
    expect(check('new.txt', 'write', roots)).toMatchObject({ ok: false, reason: 'read_only_root' });
    expect(check('new.txt', 'read', roots)).toMatchObject({ ok: true });
  });

  it('refuses paths outside every root with outside_roots and a target without a root', () => {
    const roots = [root('project', tree.proj, 'read-write', { primary: true })];
    const secret = path.join(tree.outside, 'secret.txt');
    expect(check(secret, 'read', roots)).toMatchObject({
      ok: false,
      reason: 'outside_roots',
      rule: { id: 'roots.outside', source: 'roots' },
      target: { argument: 'path', input: secret, resolved: secret, root: null, access: null },
    });
    expect(check('/', 'read', roots)).toMatchObject({ ok: false, reason: 'outside_roots' });
    expect(check('x', 'read', [])).toMatchObject({ ok: false, reason: 'invalid_path' });
    expect(check(secret, 'read', [])).toMatchObject({ ok: false, reason: 'outside_roots' });
  });

  it('picks the most specific root: a read-only subfolder of a writable root stays read-only', () => {
    const vendor = tree.mkdir('w/proj/vendor');
    const roots = [
      root('project', tree.proj, 'read-write', { primary: true }),
      root('vendor', vendor, 'read', { source: 'task' }),
    ];
    expect(check('vendor/lib.js', 'write', roots)).toMatchObject({
      ok: false,
      reason: 'read_only_root',
      target: { root: 'vendor' },
    });
    expect(check('src/main.ts', 'write', roots)).toMatchObject({ ok: true, target: { root: 'project' } });
  });

  it('picks the most specific root: a writable grant inside a read-only root allows writes there', () => {
    const out = tree.mkdir('w/proj/out');
    const roots = [
      root('project', tree.proj, 'read', { primary: true }),
      root('out', out, 'read-write', { source: 'user-grant' }),
    ];
    expect(check('out/build.log', 'write', roots)).toMatchObject({ ok: true, target: { root: 'out' } });
    expect(check('src/main.ts', 'write', roots)).toMatchObject({ ok: false, reason: 'read_only_root' });
  });

  it('breaks a tie between two roots at the same place in favour of the read-only one', () => {
    const roots = [
      root('rw', tree.proj, 'read-write', { primary: true }),
      root('ro', tree.proj, 'read', { source: 'task' }),
    ];
    expect(check('src/main.ts', 'write', roots)).toMatchObject({ ok: false, target: { root: 'ro' } });
  });

  it('ignores a root whose path is relative or dangles', () => {
    const dangling = tree.link('w/gone', path.join(tree.dir, 'nothing'));
    const roots = [root('rel', 'w/proj', 'read-write'), root('gone', dangling, 'read-write')];
    expect(check(path.join(tree.proj, 'src/main.ts'), 'read', roots)).toMatchObject({
      ok: false,
      reason: 'outside_roots',
    });
  });

  it('accepts a root written with ~', () => {
    const roots = [root('home', '~', 'read', { primary: true })];
    expect(check('notes.txt', 'read', roots)).toMatchObject({
      ok: true,
      target: { resolved: path.join(tree.home, 'notes.txt'), root: 'home' },
    });
  });

  it('returns results that satisfy the Decision schemas (reason code, rule, target)', () => {
    const roots = [root('project', tree.proj, 'read-write', { primary: true })];
    for (const input of ['src/main.ts', '../../outside/secret.txt', '\u0000', '.git/config', '~/.ssh']) {
      const r: PathResolution = check(input, 'write', roots);
      expect(Target.safeParse(r.ok ? r.target : r.target).success).toBe(true);
      if (!r.ok) {
        expect(ReasonCode.safeParse(r.reason).success).toBe(true);
        expect(RuleRef.safeParse(r.rule).success).toBe(true);
      }
    }
  });
});

describe('deny globs', () => {
  const deny = ['secrets/**', '*.pem', '.env', 'build', '**/node_modules/**'];
  const roots = (): WorkspaceRoot[] => [root('project', tree.proj, 'read-write', { primary: true, deny })];

  it.each([
    ['secrets/api.txt', 'a file under a denied folder'],
    ['secrets', 'the denied folder itself'],
    ['key.pem', 'a pattern at the top'],
    ['.env', 'a dotfile'],
    ['build/out.js', 'a file under a folder named by a plain glob'],
    ['build', 'a plain name'],
    ['pkg/node_modules/x/index.js', 'a globstar pattern'],
    ['SECRETS/api.txt', 'another case'],
  ])('denies %s (%s) for read and write with path_denied', (input) => {
    for (const access of ['read', 'write'] as const) {
      expect(check(input, access, roots())).toMatchObject({
        ok: false,
        reason: 'path_denied',
        rule: { id: 'roots.deny-glob', source: 'roots' },
        target: { root: 'project' },
      });
    }
  });

  it.each(['src/main.ts', 'src/key.pem.txt', 'src/.env.example', 'buildx/a', 'src/secrets.md', '.'])(
    'allows %s',
    (input) => {
      expect(check(input, 'write', roots())).toMatchObject({ ok: true });
    },
  );

  it('reads a leading / or ./ as anchored at the root, and / alone as the whole root', () => {
    const anchored = [
      root('project', tree.proj, 'read-write', { primary: true, deny: ['/src/main.ts', './a/b'] }),
    ];
    expect(check('src/main.ts', 'read', anchored)).toMatchObject({ reason: 'path_denied' });
    expect(check('a/b/c/d/e.txt', 'read', anchored)).toMatchObject({ reason: 'path_denied' });
    expect(check('a/f.txt', 'read', anchored)).toMatchObject({ ok: true });
    const all = [root('project', tree.proj, 'read-write', { primary: true, deny: ['/'] })];
    expect(check('src/main.ts', 'read', all)).toMatchObject({ reason: 'path_denied' });
    expect(check('.', 'read', all)).toMatchObject({ ok: true });
  });

  it('matches relative to the root, against the canonical path (a link into a denied folder is denied)', () => {
    tree.file('w/proj/secrets/api.txt');
    tree.link('w/proj/innocent', 'secrets');
    expect(check('innocent/api.txt', 'read', roots())).toMatchObject({ ok: false, reason: 'path_denied' });
  });

  it("applies an outer root's deny globs inside a nested root", () => {
    const pkg = tree.mkdir('w/proj/pkg');
    const nested = [
      root('project', tree.proj, 'read', { primary: true, deny: ['**/.env'] }),
      root('pkg', pkg, 'read-write', { source: 'task' }),
    ];
    expect(check('pkg/.env', 'write', nested)).toMatchObject({ ok: false, reason: 'path_denied' });
    expect(check('pkg/index.ts', 'write', nested)).toMatchObject({ ok: true, target: { root: 'pkg' } });
  });
});
