import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/child-scripts.ts';
import { UNIT_FILES } from '../tiers.ts';

const read = (rel: string) => readFileSync(join(REPO_ROOT, rel), 'utf8');

describe('the unit tier, whose files share their worker’s modules', () => {
  it('lists files that exist, once each', () => {
    const all = new Set(
      readdirSync(join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' }).map((f) => `test/${f}`),
    );
    expect(UNIT_FILES.filter((f) => !all.has(f))).toEqual([]);
    expect(new Set(UNIT_FILES).size).toBe(UNIT_FILES.length);
  });

  it('holds no file that mocks a module or stubs a global', () => {
    const mocking = /\bvi\s*\.\s*(mock|doMock|stubGlobal|stubEnv)\s*\(/;
    expect(UNIT_FILES.filter((f) => mocking.test(read(f)))).toEqual([]);
  });

  it('no helper registers a hook at its top level (only setup files, which run for every file, do)', () => {
    const setup = new Set([
      'support/console-guard.ts',
      'support/state-home.ts',
      'support/cleanup-hooks.ts',
      'support/unit-guard.ts',
    ]);
    const helpers = readdirSync(join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('fixtures/') && !setup.has(f),
    );
    const topLevelHook = /^(afterEach|beforeEach|afterAll|beforeAll)\s*\(/m;
    expect(helpers.filter((f) => topLevelHook.test(read(`test/${f}`)))).toEqual([]);
  });
});
