import fc from 'fast-check';
import picomatch from 'picomatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import { globsOverlap } from '../../policy/paths/pattern-overlap.ts';
import { escapeGlob, GLOB_OPTIONS } from '../../policy/paths/sensitive.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { runs } from '../support/laws.ts';

describe('a shell glob against a sensitive-path glob', () => {
  const cases: [string, string, boolean, boolean?][] = [
    ['/home/u/.ss?/id_rsa', '/home/u/.ssh/**', true],
    ['/home/u/.[s]sh', '/home/u/.ssh/**', true],
    ['/home/u/.*/id_rsa', '/home/u/.ssh/**', true],
    ['/home/u/.SS?', '/home/u/.ssh/**', true],
    ['/home/u/.\u212Aube/config', '/home/u/.kube/**', true],
    ['/etc/sha*', '/etc/shadow/**', true],
    ['/etc/[!a]hadow', '/etc/shadow/**', true],
    ['/home/*/.ssh/id_rsa', '/home/*/.ssh/**', true],
    // bash: a wildcard never matches a leading dot
    ['/home/u/*/id_rsa', '/home/u/.ssh/**', false],
    ['/home/u/?ssh', '/home/u/.ssh/**', false],
    ['/etc/[a-r]*', '/etc/shadow/**', false],
    ['/p/src/*.ts', '**/.env/**', false],
    ['/p/build/x', '/home/u/.ssh/**', false],
    // a tree: some path beneath the directory
    ['/home', '/home/*/.ssh/**', true, true],
    ['/', '/etc/shadow/**', true, true],
    ['/home/u', '/home/u/.ssh/**', true, true],
    ['/home/u/project', '/home/u/.ssh/**', false, true],
    ['/p/build', '/p/.snotra/**', false, true],
    ['/p', '/p/.snotra/**', true, true],
  ];
  for (const [shell, rule, want, tree] of cases) {
    it(`${shell} ${tree === true ? 'holds' : 'can match'} ${rule}: ${want}`, () => {
      expect(globsOverlap(shell, rule, tree === true)).toBe(want);
    });
  }

  const segment = fc.stringMatching(/^\.?[a-z0-9_-]{1,6}$/);
  const path = fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => '/' + s.join('/'));

  it('a glob made from a path by wildcarding its characters always overlaps that path (property)', () => {
    const glob = fc.tuple(path, fc.array(fc.nat(), { maxLength: 4 }), fc.boolean()).map(([p, cuts, star]) => {
      const chars = [...p];
      for (const c of cuts) {
        const i = c % chars.length;
        // Never a separator, never a leading dot (bash does not match those with a wildcard).
        if (chars[i] === '/' || (chars[i] === '.' && chars[i - 1] === '/')) continue;
        chars[i] = star ? '*' : '?';
      }
      return { p, g: chars.join('') };
    });
    fc.assert(
      fc.property(glob, ({ p, g }) => {
        expect(globsOverlap(g, `${escapeGlob(p)}/**`)).toBe(true);
      }),
      { numRuns: runs(500) },
    );
  });

  it('for a literal path it agrees with picomatch (property)', () => {
    fc.assert(
      fc.property(path, path, (a, b) => {
        const rule = `${escapeGlob(b)}/**`;
        expect(globsOverlap(escapeGlob(a), rule)).toBe(picomatch(rule, GLOB_OPTIONS)(a));
      }),
      { numRuns: runs(500) },
    );
  });
});

describe('Unicode spellings of deny globs and sensitive names', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace({
      workspace: {
        roots: [{ id: 'project', path: 'project', access: 'read-write', primary: true, deny: ['Résumé'] }],
      },
    });
  });
  afterAll(() => ws.cleanup());

  it('checkPattern never throws, whatever the pattern (property)', () => {
    const roots = ws.context().roots;
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.boolean(), fc.boolean(), (pattern, write, tree) => {
        const d = ws.env.paths.checkPattern(pattern, write ? 'write' : 'read', roots, tree);
        expect(d === null || typeof d.reason === 'string').toBe(true);
      }),
      { numRuns: runs(300) },
    );
  });

  it('a decomposed (NFD) spelling of a deny-glob name is still denied, and the composed one too', () => {
    for (const name of ['Re\u0301sume\u0301', 'R\u00e9sum\u00e9', 'RE\u0301SUME\u0301']) {
      const d = evaluate(
        { tool: 'read_file', args: { path: `${name}/cv.txt` } },
        ws.context({ mode: 'allow' }),
      );
      expect(d.reason, name).toBe('path_denied');
    }
    const ok = evaluate(
      { tool: 'read_file', args: { path: 'Resume/cv.txt' } },
      ws.context({ mode: 'allow' }),
    );
    expect(ok.decision).toBe('allow');
  });
});
