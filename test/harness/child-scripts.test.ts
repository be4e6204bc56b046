import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHILD_SCRIPTS, childNodeArgs, CHILDREN_ENV, REPO_ROOT } from '../support/child-scripts.ts';

describe('child scripts', () => {
  it('runs a listed script from its bundle when globalSetup built them, else through tsx', () => {
    const saved = process.env[CHILDREN_ENV];
    try {
      delete process.env[CHILDREN_ENV];
      expect(childNodeArgs('test/store/crash-writer.ts')).toEqual([
        '--import',
        'tsx',
        join(REPO_ROOT, 'test/store/crash-writer.ts'),
      ]);
      // A folder without the bundle (a failed build) falls back to the source as well.
      process.env[CHILDREN_ENV] = join(REPO_ROOT, 'test', 'no-such-folder');
      expect(childNodeArgs(join(REPO_ROOT, 'test/store/crash-writer.ts'))[1]).toBe('tsx');
    } finally {
      if (saved === undefined) delete process.env[CHILDREN_ENV];
      else process.env[CHILDREN_ENV] = saved;
    }
  });

  it('refuses a script that is not listed, so a new child cannot skip the bundling unnoticed', () => {
    expect(() => childNodeArgs('test/store/no-such-child.ts')).toThrow(/not listed in CHILD_SCRIPTS/);
  });

  it('every child script the suite starts is listed, and no test starts one through tsx by hand', () => {
    const files = readdirSync(join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter(
      (f) =>
        f.endsWith('.ts') &&
        !f.startsWith('fixtures/') &&
        f !== 'harness/child-scripts.test.ts' &&
        f !== 'support/child-scripts.ts',
    );
    const byHand = files.filter((f) =>
      /\[\s*'--import',\s*'tsx',\s*[A-Za-z(]/.test(readFileSync(join(REPO_ROOT, 'test', f), 'utf8')),
    );
    expect(byHand).toEqual([]);
    for (const s of CHILD_SCRIPTS) expect(files).toContain(s.slice('test/'.length));
  });
});
