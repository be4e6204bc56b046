import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import { shellReason } from '../../policy/shell-step.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { SHELL_CORPUS } from './shell-corpus.ts';

let ws: Workspace;
beforeAll(async () => {
  // /tmp is a read-write root too, so the benign cases that write under /tmp stay inside the roots.
  ws = await createWorkspace({
    workspace: {
      roots: [
        { id: 'project', path: 'project', access: 'read-write', primary: true },
        { id: 'docs', path: 'docs', access: 'read' },
        { id: 'tmp', path: '/tmp', access: 'read-write' },
      ],
    },
  });
});
afterAll(() => ws.cleanup());

const EXPECTED = {
  hardline: ['deny', 'hardline_command'],
  unanalyzable: ['approval-required', 'unanalyzable_command'],
  ok: ['allow', 'mode_allow'],
} as const;

/**
 * Unanalyzable or ok at the analyzer, denied by the engine: a part writes outside the roots or a
 * never-writable path, and a denial anywhere in a command wins over asking (issue 35).
 */
const DENIED_BY_ENGINE: Readonly<Record<string, readonly [string, string]>> = {
  'touch ./-rf && rm * /': ['deny', 'outside_roots'],
  // git config KEY VALUE writes .git/config, never writable by tools (issue 35).
  "git config alias.p 'push -f'": ['deny', 'never_writable_path'],
  'git config user.name "Agent"': ['deny', 'never_writable_path'],
  // Installing a crontab writes the cron spool, outside every root (issue 35, class 4).
  'crontab /tmp/cron.txt': ['deny', 'outside_roots'],
};

describe('the shell corpus through the policy engine, in allow mode', () => {
  it(`has at least 200 cases (${SHELL_CORPUS.length})`, () => {
    expect(SHELL_CORPUS.length).toBeGreaterThanOrEqual(200);
  });

  for (const c of SHELL_CORPUS) {
    const [decision, fixedReason] = DENIED_BY_ENGINE[c.command] ?? EXPECTED[c.expect];
    it(`${c.expect}: ${JSON.stringify(c.command).slice(0, 150)}`, () => {
      const d = evaluate({ tool: 'shell', args: { command: c.command } }, ws.context({ mode: 'allow' }));
      // Unanalyzable inline interpreter code has its own reason code (issue 12).
      const denied = DENIED_BY_ENGINE[c.command] !== undefined;
      const reason =
        c.expect === 'unanalyzable' && !denied ? shellReason(c.ruleId ?? d.rule.id) : fixedReason;
      expect({ decision: d.decision, reason: d.reason }).toEqual({ decision, reason });
      if (c.ruleId !== undefined && !denied) expect(d.rule.id).toBe(c.ruleId);
    });
  }

  it('hardline commands stay denied in ask and deny mode too (no approval can lift them)', () => {
    for (const c of SHELL_CORPUS.filter((x) => x.expect === 'hardline')) {
      for (const mode of ['ask', 'deny'] as const) {
        const d = evaluate({ tool: 'shell', args: { command: c.command } }, ws.context({ mode }));
        expect(d.reason, `${mode}: ${c.command}`).toBe('hardline_command');
      }
    }
  });
});
