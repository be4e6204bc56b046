// The lint rule that keeps time injected (eslint.config.mjs, wallTimeFiles): a product file that
// reads wall time or arms Node's timers itself fails lint; the injected Clock, a Date of a given
// moment and a socket's own timeout pass; runtime/time/ and the listed wall-time files are exempt.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// Only the rule under test runs (the cycle rule walks the import graph, seconds on a loaded machine).
const eslint = new ESLint({
  cwd: process.cwd(),
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax',
});

/** The wall-time messages lint reports for `code` as the file `filePath`. */
async function wallTime(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

describe('time is injected: wall time in product code fails lint', () => {
  it('every direct read of wall time or Node timer is reported, naming the Clock', async () => {
    const evasions = [
      'export const at = Date.now();',
      'export const at = new Date().toISOString();',
      'export const at = new Date;',
      'setTimeout(() => {}, 10);',
      'export const t = setInterval(() => {}, 10);',
      'globalThis.setTimeout(() => {}, 10);',
      'export const late = () => Date.now() + 1000;',
    ];
    const files = ['runtime/runs/new-part.ts', 'surfaces/sidecar/new-route.ts', 'store/new-table.ts'];
    for (const [i, code] of evasions.entries()) {
      const file = files[i % files.length] ?? '';
      const found = await wallTime(code, file);
      expect(found, `${file}: ${code}`).toHaveLength(1);
      expect(found[0]).toContain('use the injected Clock (runtime/time/clock.ts');
    }
  }, 60_000);

  it('the injected clock, a given moment and a socket timeout are not wall time', async () => {
    const lookAlikes = [
      'export function f(clock: { now(): number }) { return clock.now(); }',
      'export function f(c: { setTimeout(f: () => void, ms: number): unknown }) { c.setTimeout(() => {}, 5); }',
      'export const at = new Date(1_700_000_000_000).toISOString();',
      'export function f(s: { setTimeout(ms: number, f: () => void): void }) { s.setTimeout(10, () => {}); }',
      // A default for an injected clock is the injection point, not a read.
      'export function f(clock: () => number = Date.now) { return clock(); }',
    ];
    for (const code of lookAlikes) expect(await wallTime(code, 'runtime/runs/new-part.ts'), code).toEqual([]);
  }, 60_000);

  it('the clock itself, the listed wall-time files and tests are exempt', async () => {
    const code = 'export const at = Date.now(); setTimeout(() => {}, 1);';
    for (const file of ['runtime/time/clock.ts', 'runtime/bus/embedded.ts', 'test/some/new.test.ts']) {
      expect(await wallTime(code, file), file).toEqual([]);
    }
    expect(await wallTime(code, 'runtime/time-extra.ts')).toHaveLength(2);
  }, 60_000);
});
