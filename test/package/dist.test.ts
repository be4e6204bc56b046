// The compiled build is what users run: it must build, and every file a module finds next to
// itself (`new URL('./x', import.meta.url)`) must be there in dist/ too, where the module sits at
// another depth of another tree.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SOURCE_DIRS } from '../../bin/build-state.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SIBLING = /new URL\(\s*(['"`])(\.{1,2}\/[^'"`]*)\1\s*,\s*import\.meta\.url\s*\)/g;

function sources(): string[] {
  const out: string[] = [];
  for (const dir of SOURCE_DIRS)
    for (const f of readdirSync(join(root, dir), { recursive: true }) as string[])
      if (f.endsWith('.ts') && !f.endsWith('.d.ts')) out.push(join(dir, f));
  return out;
}

describe('the compiled build', () => {
  it('built from these sources before the tests ran (the setup falls back to the sources, this fails)', () => {
    expect(process.env.SNOTRA_TEST_DIST_BUILD).toBe('ok');
  });

  it('every file a module finds next to itself exists beside the compiled module too', () => {
    const found: string[] = [];
    const missing: string[] = [];
    for (const src of sources()) {
      const text = readFileSync(join(root, src), 'utf8');
      for (const m of text.matchAll(SIBLING)) {
        const target = m[2] as string;
        const fromSource = join(root, dirname(src), target);
        const compiled = join(root, 'dist', dirname(src), target.replace(/\.ts$/, '.js'));
        found.push(`${src}: ${target}`);
        if (!existsSync(fromSource)) missing.push(`${src}: ${target} (in the sources)`);
        if (!existsSync(compiled)) missing.push(`${src}: ${relative(root, compiled)} (in dist/)`);
      }
    }
    // The search worker and the web app are found this way today: the scan must see them.
    expect(found.length).toBeGreaterThanOrEqual(2);
    expect(missing).toEqual([]);
  });
});
