import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import type { Mode } from '../../policy/risk.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { FAIL_CLOSED_CASES, type Expect, type FailClosedCase } from './shell-failclosed-cases.ts';

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

/** The decision expected in `mode`, from the one expected in `allow` mode. */
export function expectedIn(
  mode: Mode,
  allowMode: Expect,
  risk: string,
): { decision: string; reason: string } {
  if (allowMode !== 'allow' && allowMode[0] === 'deny') return { decision: 'deny', reason: allowMode[1] };
  if (mode === 'deny') return { decision: 'deny', reason: 'mode_deny' };
  if (allowMode !== 'allow') return { decision: 'approval-required', reason: allowMode[1] };
  if (mode === 'ask' && risk !== 'read') return { decision: 'approval-required', reason: 'mode_ask' };
  return { decision: 'allow', reason: 'mode_allow' };
}

function call(c: FailClosedCase): { tool: string; args: unknown } {
  return c.tool !== undefined
    ? { tool: c.tool, args: c.args }
    : { tool: 'shell', args: { command: c.command } };
}

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
        const d = evaluate(call(c), ctx);
        const want = expectedIn(mode, c.expect, d.risk);
        if (d.decision !== want.decision || d.reason !== want.reason)
          wrong.push(
            `class ${c.cls} ${JSON.stringify(call(c).args)}: ${d.decision}/${d.reason} (${d.rule.id}), want ${want.decision}/${want.reason}`,
          );
      }
      expect(wrong).toEqual([]);
    });
  }
});
