import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/child-scripts.ts';

/**
 * No import cycle in product code, type-only imports included. The lint rule (import-x/no-cycle
 * in eslint.config.mjs) skips `import type`, and a cycle of types still ties two modules together:
 * neither can move or split without the other. This walks every relative `import`/`export … from`
 * of the product folders and finds the strongly connected components (Tarjan).
 */
const PRODUCT = ['policy', 'machines', 'actors', 'runtime', 'store', 'surfaces'];
const SPECIFIER =
  /(?:^|\n)\s*(?:import|export)\s[^'";]*?\sfrom\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function productFiles(): string[] {
  const files = ['index.ts'];
  for (const dir of PRODUCT)
    for (const f of readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' }))
      if (f.endsWith('.ts') && !f.includes('node_modules') && !f.startsWith('app/')) files.push(join(dir, f));
  return files;
}

function graph(): Map<string, string[]> {
  const files = new Set(productFiles());
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    const to: string[] = [];
    for (const m of text.matchAll(SPECIFIER)) {
      const target = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), (m[1] ?? m[2]) as string));
      if (files.has(target)) to.push(target);
    }
    edges.set(file, to);
  }
  return edges;
}

/** The components of more than one module, or of one that imports itself. */
function cycles(edges: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe('import cycles', () => {
  it('finds a cycle when there is one (the walk itself is checked)', () => {
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(g)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('product code has none, type-only imports included', () => {
    const g = graph();
    expect(g.size).toBeGreaterThan(300);
    expect(cycles(g)).toEqual([]);
  });
});
