import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPathGuard } from '../../policy/paths/index.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { root } from './paths-tree.ts';
import { runs } from '../support/laws.ts';

const LINK_SLOTS = ['l1', 'a/l2', 'c/l3', 'a/b/l4'] as const;
const SEGMENTS = [
  'a',
  'b',
  'c',
  'f.txt',
  'new',
  'l1',
  'l2',
  'l3',
  'l4',
  '.',
  '..',
  '..cache',
  'proj',
  'w',
  'out',
];

/** Link targets: inside, outside, up, chains, a sibling with the root's name prefix, dangling. */
function linkTargets(dir: string): string[] {
  return [
    '..',
    '../..',
    '../../..',
    'a',
    'a/b',
    '../c',
    'l1',
    'missing',
    '../proj-evil',
    'b/../..',
    path.join(dir, 'out'),
    path.join(dir, 'w/proj'),
    path.join(dir, 'w/proj/a/b'),
    path.join(dir, 'w/proj-evil'),
  ];
}

interface Scenario {
  readonly links: readonly { readonly slot: number; readonly target: number }[];
  readonly segments: readonly string[];
  readonly absolute: boolean;
  readonly access: 'read' | 'write';
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  links: fc.array(fc.record({ slot: fc.nat(LINK_SLOTS.length - 1), target: fc.nat(13) }), { maxLength: 6 }),
  segments: fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 8 }),
  absolute: fc.boolean(),
  access: fc.constantFrom('read', 'write'),
});

function buildTree(links: Scenario['links']): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'snotra-paths-prop-')));
  for (const d of ['w/proj/a/b', 'w/proj/c', 'w/proj-evil', 'out', 'home'])
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.writeFileSync(path.join(dir, 'w/proj/a/f.txt'), 'f');
  fs.writeFileSync(path.join(dir, 'out/f.txt'), 'outside');
  const targets = linkTargets(dir);
  const used = new Set<number>();
  for (const link of links) {
    if (used.has(link.slot)) continue;
    used.add(link.slot);
    fs.symlinkSync(targets[link.target] ?? '..', path.join(dir, 'w/proj', LINK_SLOTS[link.slot] ?? 'l1'));
  }
  return dir;
}

/** The longest prefix of `p` that exists (without following a final symlink), and the rest. */
function nearestExisting(p: string): { existing: string; rest: string } {
  let existing = p;
  const rest: string[] = [];
  while (fs.lstatSync(existing, { throwIfNoEntry: false }) === undefined) {
    rest.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  return { existing, rest: rest.join('/') };
}

function kernelRealpath(p: string): string | null {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return null;
  }
}

function insideOf(rootPath: string, p: string): boolean {
  const rel = path.relative(rootPath, p);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !path.isAbsolute(rel));
}

describe('confinement property (real temp trees, random symlinks and paths)', () => {
  // One guard for every run: its home, state dir and config file lie outside all generated trees.
  const base = path.join(os.tmpdir(), 'snotra-paths-prop-guard');
  const guard = createPathGuard({
    home: path.join(base, 'home'),
    stateDir: path.join(base, 'state'),
    configFile: path.join(base, 'snotra.config.json'),
  });

  it('an accepted path canonicalizes, via realpath of its nearest existing ancestor, inside a root that grants the access; and it agrees with the kernel', () => {
    fc.assert(
      fc.property(scenario, ({ links, segments, absolute, access }) => {
        const dir = buildTree(links);
        try {
          const proj = path.join(dir, 'w/proj');
          const nested = path.join(proj, 'a/b');
          const roots: WorkspaceRoot[] = [
            root('project', proj, 'read-write', { primary: true }),
            root('nested', nested, 'read', { source: 'task' }),
          ];
          const relative = segments.join('/');
          const input = absolute ? `${proj}/${relative}` : relative;
          const result = guard.resolve('path', input, access, roots);
          const kernel = kernelRealpath(`${proj}/${relative}`);

          if (result.ok) {
            const resolved = result.target.resolved ?? '';
            const { existing, rest } = nearestExisting(resolved);
            const real = kernelRealpath(existing);
            expect(real).not.toBeNull();
            expect(rest === '' ? real : `${real}/${rest}`).toBe(resolved);
            expect(insideOf(proj, resolved)).toBe(true);
            if (access === 'write') expect(insideOf(nested, resolved)).toBe(false);
            if (kernel !== null) expect(resolved).toBe(kernel);
          } else if (
            kernel !== null &&
            insideOf(proj, kernel) &&
            (access === 'read' || !insideOf(nested, kernel))
          ) {
            // Completeness: what the kernel resolves inside a granting root is not refused.
            expect.fail(`refused ${input} (${result.reason}) though the kernel resolves it to ${kernel}`);
          }
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: runs(400) },
    );
  });
});
