import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { callOf, expectedIn, FAIL_CLOSED_CASES } from './shell-failclosed-cases.ts';

let ws: Workspace;
beforeAll(async () => {
  // The runtime's state dir inside the primary root (the old default): class 10 is about it.
  ws = await createWorkspace({ stateDir: 'project/.snotra' });
  mkdirSync(join(ws.project, '.snotra'), { recursive: true });
  mkdirSync(join(ws.project, 'build'), { recursive: true });
  mkdirSync(join(ws.dir, 'outside'), { recursive: true });
  writeFileSync(join(ws.project, 'README.md'), 'readme\n');
  symlinkSync(join(ws.dir, 'outside'), join(ws.project, 'link-out'));
});
afterAll(() => ws.cleanup());

describe('fail-closed shell analysis: every class, its evasions and look-alikes, in all three modes', () => {
  it('covers each of the 18 classes with a denied or human case and a look-alike that is allowed', () => {
    for (let cls = 1; cls <= 18; cls++) {
      const cases = FAIL_CLOSED_CASES.filter((c) => c.cls === cls);
      expect(
        cases.some((c) => c.expect !== 'allow'),
        `class ${cls}`,
      ).toBe(true);
      if (cls !== 9)
        expect(
          cases.some((c) => c.expect === 'allow'),
          `class ${cls} look-alike`,
        ).toBe(true);
    }
  });

  for (const mode of ['allow', 'ask', 'deny'] as const) {
    it(`${mode} mode`, () => {
      const ctx = ws.context({ mode });
      const wrong: string[] = [];
      for (const c of FAIL_CLOSED_CASES) {
        const d = evaluate(callOf(c), ctx);
        const want = expectedIn(mode, c.expect, d.risk);
        if (d.decision !== want.decision || d.reason !== want.reason)
          wrong.push(
            `class ${c.cls} ${JSON.stringify(callOf(c).args)}: ${d.decision}/${d.reason} (${d.rule.id}), want ${want.decision}/${want.reason}`,
          );
      }
      expect(wrong).toEqual([]);
    });
  }
});
