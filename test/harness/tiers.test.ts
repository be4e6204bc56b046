import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/child-scripts.ts';
import { ISOLATED_FILES, LONG_FILES, UNIT_FILES } from '../tiers.ts';

const read = (rel: string) => readFileSync(join(REPO_ROOT, rel), 'utf8');
const testTree = () =>
  readdirSync(join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' }).map((f) => `test/${f}`);

describe('the tiers, whose files share their worker’s modules', () => {
  it('list files that exist, once each, and no file is both unit and isolated', () => {
    const all = new Set(testTree());
    const listed = [...UNIT_FILES, ...ISOLATED_FILES];
    expect(listed.filter((f) => !all.has(f))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
    expect(LONG_FILES.filter((f) => !all.has(f) || UNIT_FILES.includes(f))).toEqual([]);
  });

  it('only an isolated file mocks a module or stubs a global', () => {
    const mocking = /\bvi\s*\.\s*(mock|doMock|stubGlobal|stubEnv)\s*\(/;
    const shared = testTree().filter((f) => f.endsWith('.test.ts') && !ISOLATED_FILES.includes(f));
    expect(shared.filter((f) => mocking.test(read(f)))).toEqual([]);
  });

  it('no helper registers a hook at its top level (only setup files, which run for every file, do)', () => {
    const setup = new Set([
      'test/support/console-guard.ts',
      'test/support/state-home.ts',
      'test/support/cleanup-hooks.ts',
      'test/support/unit-guard.ts',
    ]);
    const helpers = testTree().filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('test/fixtures/') && !setup.has(f),
    );
    const topLevelHook = /^(afterEach|beforeEach|afterAll|beforeAll)\s*\(/m;
    expect(helpers.filter((f) => topLevelHook.test(read(f)))).toEqual([]);
  });
});
