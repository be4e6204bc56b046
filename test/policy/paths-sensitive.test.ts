import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPathGuard,
  NEVER_WRITABLE_PATHS,
  PathRuleInput,
  SENSITIVE_PATHS,
  type PathRule,
} from '../../policy/paths/index.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { guardFor, makeTree, root, type TempTree } from './paths-tree.ts';

let tree: TempTree;

beforeEach(() => {
  tree = makeTree();
});
afterEach(() => tree.cleanup());

/** The project (primary, read-write), the home (read-write: so only the sensitive rule can deny), and `/` (read). */
function wideRoots(): WorkspaceRoot[] {
  return [
    root('project', tree.proj, 'read-write', { primary: true }),
    root('home', tree.home, 'read-write'),
    root('host', '/', 'read'),
  ];
}

/** A concrete path one pattern covers, on this tree; null for another flavor's pattern. */
function examplePath(pattern: string): string | null {
  const concrete = pattern.replace(/\*\*/g, 'sub').replace(/\*/g, 'self');
  if (concrete.startsWith('~/')) return path.join(tree.home, concrete.slice(2));
  if (concrete.startsWith('sub/')) return path.join(tree.proj, 'pkg', concrete.slice(4));
  if (concrete.startsWith('/')) return concrete;
  return null;
}

function cases(rules: readonly PathRule[]): [string, string][] {
  return rules.flatMap((rule) => rule.patterns.map((pattern): [string, string] => [rule.id, pattern]));
}

describe('sensitive host paths (defaults, every pattern)', () => {
  it.each(cases(SENSITIVE_PATHS))(
    '%s covers %s and everything beneath, for read and write',
    (id, pattern) => {
      const example = examplePath(pattern);
      if (example === null) return; // a Windows drive pattern: covered by paths-windows
      const guard = guardFor(tree);
      for (const input of [example, `${example}/child`]) {
        for (const access of ['read', 'write'] as const) {
          expect(guard.resolve('path', input, access, wideRoots())).toMatchObject({
            ok: false,
            reason: 'sensitive_path',
            rule: { id, source: 'sensitive-path' },
          });
          expect(guard.checkSensitive(input, access, wideRoots())).toMatchObject({
            reason: 'sensitive_path',
          });
        }
      }
    },
  );
});

describe('never-writable paths (defaults, every pattern)', () => {
  it.each(cases(NEVER_WRITABLE_PATHS))('%s covers %s: write denied, read allowed', (id, pattern) => {
    const example = examplePath(pattern);
    if (example === null) return;
    const guard = guardFor(tree);
    expect(guard.resolve('path', example, 'write', wideRoots())).toMatchObject({
      ok: false,
      reason: 'never_writable_path',
      rule: { id, source: 'sensitive-path' },
    });
    expect(guard.checkSensitive(example, 'write', wideRoots())).toMatchObject({
      reason: 'never_writable_path',
    });
    expect(guard.checkSensitive(example, 'read', wideRoots())).toBeNull();
    expect(guard.resolve('path', example, 'read', wideRoots())).toMatchObject({ ok: true });
  });
});

describe('sensitive paths however they are reached', () => {
  const id_rsa = () => path.join(tree.home, '.ssh/id_rsa');

  it('denies ~/.ssh/id_rsa named directly, through ~, and through ..', () => {
    const guard = guardFor(tree);
    for (const input of [
      id_rsa(),
      '~/.ssh/id_rsa',
      '~/.ssh',
      '../../home/.ssh/id_rsa',
      'src/../../../home/.ssh',
    ]) {
      expect(guard.resolve('path', input, 'read', wideRoots()), input).toMatchObject({
        ok: false,
        reason: 'sensitive_path',
        rule: { id: 'sensitive.ssh' },
      });
    }
  });

  it('denies it through a symlink inside the workspace, even though the root would allow the link', () => {
    tree.link('w/proj/keys', path.join(tree.home, '.ssh'));
    tree.link('w/proj/src/key', '../../../home/.ssh/id_rsa');
    const guard = guardFor(tree);
    const roots = [root('project', tree.proj, 'read-write', { primary: true })];
    for (const input of ['keys/id_rsa', 'keys', 'src/key']) {
      expect(guard.resolve('path', input, 'read', roots)).toMatchObject({
        ok: false,
        reason: 'sensitive_path',
        target: { resolved: expect.stringContaining(path.join(tree.home, '.ssh')) },
      });
      expect(guard.checkSensitive(input, 'read', roots)).toMatchObject({ reason: 'sensitive_path' });
    }
  });

  it('denies it through the lexical path when ~/.ssh itself is a link elsewhere', () => {
    fs.rmSync(path.join(tree.home, '.ssh'), { recursive: true });
    tree.file('dotfiles/ssh/id_rsa');
    tree.link('home/.ssh', path.join(tree.dir, 'dotfiles/ssh'));
    const guard = guardFor(tree);
    const roots = [root('all', tree.dir, 'read', { primary: true })];
    expect(guard.resolve('path', '~/.ssh/id_rsa', 'read', roots)).toMatchObject({ reason: 'sensitive_path' });
    // The canonical form of ~/.ssh known when the guard was built is protected too.
    expect(guard.resolve('path', 'dotfiles/ssh/id_rsa', 'read', roots)).toMatchObject({
      reason: 'sensitive_path',
    });
  });

  it('denies it through a link passed on the way when ~/.ssh was re-pointed after the guard was built', () => {
    const guard = guardFor(tree);
    fs.rmSync(path.join(tree.home, '.ssh'), { recursive: true });
    tree.file('elsewhere/id_rsa');
    tree.link('home/.ssh', path.join(tree.dir, 'elsewhere'));
    tree.link('w/proj/k', path.join(tree.home, '.ssh'));
    const roots = [root('all', tree.dir, 'read', { primary: true })];
    expect(guard.resolve('path', 'w/proj/k/id_rsa', 'read', roots)).toMatchObject({
      reason: 'sensitive_path',
    });
  });

  it('ignores case (case-insensitive file systems open ~/.SSH as ~/.ssh)', () => {
    const guard = guardFor(tree);
    expect(guard.checkSensitive('~/.SSH/id_rsa', 'read', wideRoots())).toMatchObject({
      reason: 'sensitive_path',
    });
    expect(guard.checkSensitive('~/.Aws', 'read', wideRoots())).toMatchObject({
      rule: { id: 'sensitive.aws' },
    });
  });

  it('protects the same names under other accounts homes', () => {
    const guard = guardFor(tree);
    for (const input of ['/root/.ssh/id_ed25519', '/home/bob/.aws/credentials', '/Users/eve/.kube/config']) {
      expect(guard.checkSensitive(input, 'read', wideRoots()), input).toMatchObject({
        reason: 'sensitive_path',
      });
    }
  });

  it('works when the injected home is itself a symlink', () => {
    const alias = tree.link('home-alias', tree.home);
    const guard = guardFor(tree, { home: alias });
    expect(guard.checkSensitive(id_rsa(), 'read', wideRoots())).toMatchObject({ reason: 'sensitive_path' });
    expect(guard.checkSensitive('~/.ssh/id_rsa', 'read', wideRoots())).toMatchObject({
      reason: 'sensitive_path',
    });
  });

  it('treats glob characters in the home path literally', () => {
    const odd = path.dirname(tree.file('we!rd (home) [1]+{a,b}/.ssh/id_rsa'));
    const home = path.dirname(odd);
    const guard = guardFor(tree, { home });
    expect(guard.checkSensitive('~/.ssh/id_rsa', 'read', wideRoots())).toMatchObject({
      reason: 'sensitive_path',
    });
    expect(guard.checkSensitive(path.join(home, '.ssh'), 'read', wideRoots())).toMatchObject({
      rule: { id: 'sensitive.ssh' },
    });
    expect(
      guard.checkSensitive(path.join(tree.dir, 'weird (home) [1]+{a,b}/.ssh'), 'read', wideRoots()),
    ).toBeNull();
  });

  it('does not flag look-alikes', () => {
    const guard = guardFor(tree);
    for (const input of ['~/.sshx', '~/notes.txt', 'src/.ssh-notes.md', '~/.config/ghost', '/etc/shadowed']) {
      expect(guard.checkSensitive(input, 'write', wideRoots()), input).toBeNull();
    }
  });

  it('refuses the runtime state dir and config file, for read and write, also through a symlink', () => {
    const guard = guardFor(tree);
    tree.file('w/proj/.snotra/runs.db');
    tree.file('w/proj/snotra.config.json', '{}');
    tree.link('w/proj/src/state', '../.snotra');
    const roots = [root('project', tree.proj, 'read-write', { primary: true })];
    for (const [input, id] of [
      ['.snotra/runs.db', 'sensitive.runtime-state'],
      ['.snotra', 'sensitive.runtime-state'],
      ['src/state/runs.db', 'sensitive.runtime-state'],
      ['snotra.config.json', 'sensitive.runtime-config'],
    ]) {
      for (const access of ['read', 'write'] as const) {
        expect(guard.resolve('path', input ?? '', access, roots), input).toMatchObject({
          ok: false,
          reason: 'sensitive_path',
          rule: { id, source: 'sensitive-path' },
        });
      }
    }
  });

  it('protects a state dir configured through a symlink under its real name too', () => {
    const real = tree.mkdir('var/state (x)');
    const alias = tree.link('state-alias', real);
    const guard = guardFor(tree, { stateDir: alias });
    const roots = [root('all', tree.dir, 'read-write', { primary: true })];
    for (const input of ['state-alias/db', 'var/state (x)/db', 'var/state (x)']) {
      expect(guard.resolve('path', input, 'read', roots), input).toMatchObject({
        rule: { id: 'sensitive.runtime-state' },
      });
    }
  });

  it('refuses a never-writable path reached through a symlink', () => {
    tree.mkdir('w/proj/.git/hooks');
    tree.link('w/proj/hooks', '.git/hooks');
    const guard = guardFor(tree);
    const roots = [root('project', tree.proj, 'read-write', { primary: true })];
    expect(guard.resolve('path', 'hooks/pre-commit', 'write', roots)).toMatchObject({
      reason: 'never_writable_path',
      rule: { id: 'never.git-hooks' },
    });
    expect(guard.resolve('path', 'hooks/pre-commit', 'read', roots)).toMatchObject({ ok: true });
  });
});

describe('extra rules from config', () => {
  it('adds sensitive and never-writable entries without removing any default', () => {
    const guard = guardFor(tree, {
      extraSensitive: [{ id: 'sensitive.ssh', description: 'an attempt to narrow', patterns: ['~/nothing'] }],
      extraNeverWritable: [
        { id: 'never.ci-config', description: 'CI', patterns: ['.github/workflows'] },
        { id: 'never.keepass', description: 'password dbs', patterns: ['**/*.kdbx'] },
      ],
    });
    const roots = [root('project', tree.proj, 'read-write', { primary: true })];
    expect(guard.checkSensitive('~/.ssh/id_rsa', 'read', roots)).toMatchObject({
      rule: { id: 'sensitive.ssh' },
    });
    expect(guard.checkSensitive('~/nothing', 'read', roots)).toMatchObject({ rule: { id: 'sensitive.ssh' } });
    expect(guard.resolve('path', '.github/workflows/ci.yml', 'write', roots)).toMatchObject({
      reason: 'never_writable_path',
      rule: { id: 'never.ci-config' },
    });
    expect(guard.resolve('path', 'db/main.KDBX', 'write', roots)).toMatchObject({
      rule: { id: 'never.keepass' },
    });
    expect(guard.resolve('path', '.github/workflows/ci.yml', 'read', roots)).toMatchObject({ ok: true });
  });

  it('validates config entries with PathRuleInput', () => {
    expect(PathRuleInput.safeParse({ id: 'sensitive.vault-data', patterns: ['~/vault'] }).success).toBe(true);
    expect(PathRuleInput.safeParse({ id: 'vault', patterns: ['~/vault'] }).success).toBe(false);
    expect(PathRuleInput.safeParse({ id: 'sensitive.x', patterns: [] }).success).toBe(false);
    expect(PathRuleInput.safeParse({ id: 'sensitive.x', patterns: ['a\nb'] }).success).toBe(false);
  });

  it('exposes the compiled globs of every rule, including the runtime entries', () => {
    const guard = guardFor(tree);
    expect(guard.rules.sensitive.get('sensitive.runtime-state')).toContain(`${tree.stateDir}/**`);
    expect(guard.rules.neverWritable.get('never.git-config')).toContain('**/.git/config/**');
  });

  it('refuses to build a guard from a relative state dir, config file or home', () => {
    expect(() =>
      createPathGuard({ stateDir: '.snotra', configFile: tree.configFile, home: tree.home }),
    ).toThrow(/stateDir/);
    expect(() => createPathGuard({ stateDir: tree.stateDir, configFile: 'x.json', home: tree.home })).toThrow(
      /configFile/,
    );
    expect(() =>
      createPathGuard({ stateDir: tree.stateDir, configFile: tree.configFile, home: 'h' }),
    ).toThrow(/home/);
  });
});
