/**
 * The sandbox's law (issue 12): whatever a command does — any path, through any symlink layout,
 * symlinks and hard links made at run time included — it cannot write outside its writable
 * roots and cannot read a sensitive file. Random layouts and operations; each run is one real
 * bubblewrap sandbox (the number of runs is modest because each spawns one).
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
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPathGuard } from '../../policy/paths/index.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createBubblewrapSandbox, hostRulesOf } from '../../runtime/sandbox/index.ts';
import { fingerprint, WORK_BASE } from './support.ts';
import { cappedRuns } from '../support/laws.ts';

const SECRET = 'SECRET-MARKER-7f3a';
let supervisor: ProcessSupervisor;
beforeAll(() => {
  supervisor = new ProcessSupervisor({ killGraceMs: 300 });
});
afterAll(async () => {
  await supervisor.shutdown();
});

/** Names a path may be built from: plain folders, links planted in the layout, and `..`. */
const SEGMENTS = ['a', 'b', 'out', 'key', 'ssh', 'state', 'up', 'loop', '..', '.', '.state'] as const;
/** Where planted links point (relative to the layout's base). */
const LINK_TARGETS = [
  'outside',
  'outside/f.txt',
  'home/.ssh',
  'home/.ssh/id_rsa',
  'home/.aws/credentials',
  'root/.state',
  'root/.state/db',
  'root/a',
  'root',
  'home',
  '.',
] as const;

interface Layout {
  /** `~/.ssh` is a symlink to a folder elsewhere in the home (the hidden target is the real one). */
  readonly sshViaLink: boolean;
  /** Links planted in the root before the command runs: name → target. */
  readonly links: readonly {
    readonly at: 'a' | 'b' | 'root';
    readonly name: string;
    readonly target: string;
  }[];
}

type Op =
  | { readonly kind: 'write'; readonly path: readonly string[] }
  | { readonly kind: 'read'; readonly path: readonly string[] }
  | { readonly kind: 'symlink'; readonly target: string; readonly then: 'read' | 'write' }
  | { readonly kind: 'hardlink'; readonly target: string }
  | { readonly kind: 'rename'; readonly from: readonly string[]; readonly to: readonly string[] };

const layoutArb: fc.Arbitrary<Layout> = fc.record({
  sshViaLink: fc.boolean(),
  links: fc.array(
    fc.record({
      at: fc.constantFrom('a' as const, 'b' as const, 'root' as const),
      name: fc.constantFrom('out', 'key', 'ssh', 'state', 'up', 'loop'),
      target: fc.constantFrom(...LINK_TARGETS),
    }),
    { maxLength: 6 },
  ),
});

const pathArb = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 5 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), path: pathArb }),
  fc.record({ kind: fc.constant('read' as const), path: pathArb }),
  fc.record({
    kind: fc.constant('symlink' as const),
    target: fc.constantFrom(...LINK_TARGETS),
    then: fc.constantFrom('read' as const, 'write' as const),
  }),
  fc.record({ kind: fc.constant('hardlink' as const), target: fc.constantFrom(...LINK_TARGETS) }),
  fc.record({ kind: fc.constant('rename' as const), from: pathArb, to: pathArb }),
);

/** Builds the layout under a fresh base: root/{a,b}, outside/, home/{.ssh,.aws}, root/.state. */
function build(layout: Layout): { base: string; root: string; home: string; state: string } {
  const base = realpathSync(mkdtempSync(join(WORK_BASE, 'snotra-sbx-prop-')));
  const root = join(base, 'root');
  const home = join(base, 'home');
  const state = join(root, '.state');
  for (const d of [join(root, 'a'), join(root, 'b'), join(base, 'outside'), join(home, '.aws'), state]) {
    mkdirSync(d, { recursive: true });
  }
  const ssh = layout.sshViaLink ? join(home, 'dotfiles', 'ssh') : join(home, '.ssh');
  mkdirSync(ssh, { recursive: true });
  if (layout.sshViaLink) symlinkSync(ssh, join(home, '.ssh'));
  writeFileSync(join(ssh, 'id_rsa'), `${SECRET}-ssh\n`);
  writeFileSync(join(home, '.aws', 'credentials'), `${SECRET}-aws\n`);
  writeFileSync(join(state, 'db'), `${SECRET}-state\n`);
  writeFileSync(join(base, 'outside', 'f.txt'), 'outside file\n');
  writeFileSync(join(base, 'snotra.config.json'), `{"marker":"${SECRET}-config"}\n`);
  for (const link of layout.links) {
    const dir = link.at === 'root' ? root : join(root, link.at);
    try {
      symlinkSync(join(base, link.target), join(dir, link.name));
    } catch {
      // The same name twice: the first link stays.
    }
  }
  return { base, root, home, state };
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The command: every operation, each allowed to fail; reads print what they got. */
function script(base: string, ops: readonly Op[]): string {
  return ops
    .map((op, i) => {
      switch (op.kind) {
        case 'write':
          return `echo W${i} > ${q(op.path.join('/'))} 2>/dev/null`;
        case 'read':
          return `cat ${q(op.path.join('/'))} 2>/dev/null`;
        case 'symlink': {
          const name = `made-${i}`;
          const use = op.then === 'read' ? `cat ${name}` : `echo W${i} > ${name}`;
          return `ln -s ${q(join(base, op.target))} ${name} 2>/dev/null; ${use} 2>/dev/null`;
        }
        case 'hardlink':
          return `ln ${q(join(base, op.target))} hard-${i} 2>/dev/null && cat hard-${i} 2>/dev/null`;
        case 'rename':
          // Moving folders aside (the state dir, or a folder above it) and writing in their place.
          return `mv ${q(op.from.join('/'))} ${q(op.to.join('/'))} 2>/dev/null; mkdir -p ${q(op.from.join('/'))} 2>/dev/null; echo W${i} > ${q(`${op.from.join('/')}/db`)} 2>/dev/null`;
      }
    })
    .concat('true')
    .join('\n');
}

describe('sandbox property: no write outside the writable root, no read of a sensitive file', () => {
  it('holds for random symlink layouts and operations', async () => {
    await fc.assert(
      fc.asyncProperty(layoutArb, fc.array(opArb, { minLength: 1, maxLength: 12 }), async (layout, ops) => {
        const { base, root, home, state } = build(layout);
        try {
          const guard = createPathGuard({
            home,
            stateDir: state,
            configFile: join(base, 'snotra.config.json'),
          });
          const sandbox = createBubblewrapSandbox({ bwrap: '/usr/bin/bwrap', rules: hostRulesOf(guard) });
          const outsideBefore = fingerprint(base, (p) => p === root);
          const stateBefore = fingerprint(state);
          const wrapped = await sandbox.wrap(
            { roots: [{ path: root, access: 'read-write' }], network: false },
            join(root, 'a'),
            '/bin/sh',
            ['-c', script(base, ops)],
          );
          const result = await supervisor.run({
            command: wrapped.command,
            args: wrapped.args,
            cwd: join(root, 'a'),
            timeoutMs: 30_000,
            maxOutputBytes: 1 << 20,
          });
          expect(result.timedOut).toBe(false);
          expect(result.stderr).not.toMatch(/^bwrap:/m);
          expect(result.stdout).not.toContain(SECRET);
          expect(fingerprint(base, (p) => p === root)).toBe(outsideBefore);
          expect(fingerprint(state)).toBe(stateBefore);
          expect(readFileSync(join(state, 'db'), 'utf8')).toBe(`${SECRET}-state\n`);
        } finally {
          rmSync(base, { recursive: true, force: true });
        }
      }),
      // Each run builds a tree and runs bwrap (~0.4 s): deep mode gets 250, not 2500 (the test's 180 s).
      { numRuns: cappedRuns(25, 250) },
    );
  }, 180_000);
});
