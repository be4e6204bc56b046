import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { BYPASS_CASES, BYPASS_CLASSES, prepareBypassWorkspace } from './shell-bypass-cases.ts';
import { callOf, expectedIn } from './shell-failclosed-cases.ts';

let ws: Workspace;
beforeAll(async () => {
  // The runtime's state dir inside the primary root: the over-block class of walks is about it.
  ws = await createWorkspace({ stateDir: 'project/.snotra' }, prepareBypassWorkspace);
});
afterAll(() => ws.cleanup());

describe('issue 35: every bypass class, its evasions and look-alikes, in all three modes', () => {
  it('gives each class a denied or human case and a look-alike that is allowed', () => {
    for (const cls of Object.keys(BYPASS_CLASSES).map(Number)) {
      const cases = BYPASS_CASES.filter((c) => c.cls === cls);
      expect(
        cases.some((c) => c.expect !== 'allow'),
        `class ${cls}`,
      ).toBe(true);
      expect(
        cases.some((c) => c.expect === 'allow'),
        `class ${cls} look-alike`,
      ).toBe(true);
    }
  });

  for (const mode of ['allow', 'ask', 'deny'] as const) {
    it(`${mode} mode`, () => {
      // As on a machine with the OS sandbox (the CLI test's), so `allow` can allow a command.
      const ctx = { ...ws.context({ mode }), sandboxed: true };
      const wrong: string[] = [];
      for (const c of BYPASS_CASES) {
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

  it('a walk that follows links and cannot be checked to its end needs a human, even in allow mode', () => {
    const ctx = { ...ws.context({ mode: 'allow' }), sandboxed: true };
    // A guard that cannot list directories (or gave up): what the walk reaches is unknown.
    const blind = { ...ctx, paths: { ...ctx.paths, linksBeneath: undefined } };
    const gaveUp = {
      ...ctx,
      paths: { ...ctx.paths, linksBeneath: () => ({ links: [], complete: false }) },
    };
    for (const c of [blind, gaveUp]) {
      const d = evaluate({ tool: 'shell', args: { command: 'grep -R x build' } }, c);
      expect([d.decision, d.reason, d.rule.id]).toEqual([
        'approval-required',
        'unanalyzable_command',
        'roots.link-walk-unchecked',
      ]);
      // A walk that does not follow links does not ask.
      expect(evaluate({ tool: 'shell', args: { command: 'grep -r x build' } }, c).decision).toBe('allow');
    }
  });
});
