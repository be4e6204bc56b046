import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Target } from '../../policy/decision.ts';
import { evaluate } from '../../policy/evaluate.ts';
import type { DelegationGuard } from '../../policy/seams.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace({ tools: { 'ext.bare': { source: 'extension' } } });
});
afterAll(() => ws.cleanup());

/** A delegation guard that records what it saw and refuses writes. */
function recordingGuard(seen: string[]): DelegationGuard {
  return {
    check(tool: string, risk: string, targets: readonly Target[]) {
      seen.push(`${tool}:${risk}:${targets.map((t) => t.resolved ?? t.input).join(',')}`);
      return risk === 'write-local'
        ? { reason: 'exceeds_parent_authority', rule: { id: 'delegation.write', source: 'delegation' } }
        : null;
    },
  };
}

describe('evaluation order (DESIGN.md §4), first hard denial wins', () => {
  it('step 1 before everything: invalid arguments beat a hardline command and deny mode', () => {
    const d = evaluate(
      { tool: 'shell', args: { command: 'rm -rf /', extra: 1 } },
      ws.context({ mode: 'deny' }),
    );
    expect(d).toMatchObject({ reason: 'invalid_arguments', step: 1 });
  });

  it('step 2 before step 3: a sensitive path is reported as sensitive, not as outside the roots', () => {
    const d = evaluate({ tool: 'read_file', args: { path: '/etc/shadow' } }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({
      decision: 'deny',
      reason: 'sensitive_path',
      step: 2,
      rule: { source: 'sensitive-path' },
    });
  });

  it('step 2 before step 3: a hardline command with a cwd outside the roots is hardline', () => {
    const d = evaluate(
      { tool: 'shell', args: { command: 'mkfs.ext4 /dev/sda1', cwd: '/' } },
      ws.context({ mode: 'allow' }),
    );
    expect(d).toMatchObject({ reason: 'hardline_command', step: 2 });
  });

  it('step 3 before the mode: outside the roots is denied even in allow mode, and in deny mode as outside_roots', () => {
    for (const mode of ['allow', 'ask', 'deny'] as const) {
      const d = evaluate({ tool: 'read_file', args: { path: `${ws.dir}/../x` } }, ws.context({ mode }));
      expect(d).toMatchObject({ decision: 'deny', reason: 'outside_roots', step: 3 });
    }
  });

  it('the shell cwd is a path argument and must lie inside a root', () => {
    const d = evaluate(
      { tool: 'shell', args: { command: 'ls', cwd: '/usr' } },
      ws.context({ mode: 'allow' }),
    );
    expect(d).toMatchObject({
      decision: 'deny',
      reason: 'outside_roots',
      step: 3,
      targets: [{ argument: 'cwd' }],
    });
  });

  it('step 4 sees the resolved targets and its denial beats the mode', () => {
    const seen: string[] = [];
    const base = ws.context({ mode: 'allow' });
    const ctx = { ...base, delegation: recordingGuard(seen) };
    expect(evaluate({ tool: 'write_file', args: { path: 'src/x', content: '' } }, ctx)).toMatchObject({
      decision: 'deny',
      reason: 'exceeds_parent_authority',
      step: 4,
      rule: { source: 'delegation' },
    });
    expect(evaluate({ tool: 'read_file', args: { path: 'src/x' } }, ctx)).toMatchObject({
      decision: 'allow',
      step: 5,
    });
    expect(seen).toEqual([
      `write_file:write-local:${ws.project}/src/x`,
      `read_file:read:${ws.project}/src/x`,
    ]);
    // A hard denial at step 3 stops the pipeline before step 4 is consulted.
    evaluate({ tool: 'read_file', args: { path: '/usr/bin/env' } }, ctx);
    expect(seen).toHaveLength(2);
  });

  it('step 5 before step 6: deny mode is reported even when a rule would also deny', () => {
    const rules = [{ id: 'no-shell', tool: 'shell', effect: 'deny' as const }];
    expect(
      evaluate({ tool: 'shell', args: { command: 'ls' } }, ws.context({ mode: 'deny', rules })),
    ).toMatchObject({
      reason: 'mode_deny',
      step: 5,
    });
    expect(
      evaluate({ tool: 'shell', args: { command: 'ls' } }, ws.context({ mode: 'allow', rules })),
    ).toMatchObject({
      reason: 'tool_rule_deny',
      step: 6,
      rule: { id: 'no-shell', source: 'tool-rule' },
    });
  });

  it('step 6: a category rule (by risk) reduces allow to ask, and deny beats ask', () => {
    const rules = [
      { id: 'ask-external', risk: 'external' as const, effect: 'ask' as const },
      { id: 'deny-http', tool: 'http_request', effect: 'deny' as const },
    ];
    expect(
      evaluate(
        { tool: 'send_message', args: { channel: '#x', text: '' } },
        ws.context({ mode: 'allow', rules }),
      ),
    ).toMatchObject({ decision: 'approval-required', reason: 'tool_rule_ask', rule: { id: 'ask-external' } });
    expect(
      evaluate(
        { tool: 'http_request', args: { url: 'https://a', method: 'GET' } },
        ws.context({ mode: 'allow', rules }),
      ),
    ).toMatchObject({ decision: 'deny', reason: 'tool_rule_deny', rule: { id: 'deny-http' } });
  });

  it('an unanalyzable command needs a human even in allow mode, and is denied in deny mode', () => {
    expect(
      evaluate({ tool: 'shell', args: { command: '$(echo rm) -rf x' } }, ws.context({ mode: 'allow' })),
    ).toMatchObject({
      decision: 'approval-required',
      reason: 'unanalyzable_command',
      step: 2,
      humanRequired: true,
    });
    expect(
      evaluate({ tool: 'shell', args: { command: 'eval "$x"' } }, ws.context({ mode: 'deny' })),
    ).toMatchObject({
      decision: 'deny',
      reason: 'mode_deny',
    });
  });

  it('a shell redirection into a read-only root or outside the roots is a write outside the writable roots', () => {
    expect(
      evaluate(
        { tool: 'shell', args: { command: `echo hi > ${ws.docs}/notes.md` } },
        ws.context({ mode: 'allow' }),
      ),
    ).toMatchObject({ decision: 'deny', reason: 'read_only_root', step: 3 });
    expect(
      evaluate(
        { tool: 'shell', args: { command: 'echo hi > ../../elsewhere.txt' } },
        ws.context({ mode: 'allow' }),
      ),
    ).toMatchObject({ decision: 'deny', reason: 'outside_roots', step: 3 });
    expect(
      evaluate({ tool: 'shell', args: { command: 'echo hi > out.txt' } }, ws.context({ mode: 'allow' })),
    ).toMatchObject({ decision: 'allow' });
  });

  it('an rsync destination is found past value-taking options (one option table for every rsync check)', () => {
    // `--bwlimit 100` after the operands once made "100" look like the destination.
    expect(
      evaluate(
        { tool: 'shell', args: { command: 'rsync -a src/ /usr/local/x/ --bwlimit 100' } },
        ws.context({ mode: 'allow' }),
      ),
    ).toMatchObject({ decision: 'deny', reason: 'outside_roots', step: 3 });
    expect(
      evaluate(
        { tool: 'shell', args: { command: 'rsync -a src/ out/ --bwlimit 100' } },
        ws.context({ mode: 'allow' }),
      ),
    ).toMatchObject({
      decision: 'allow',
    });
  });

  it('a sensitive path named inside a shell command is denied in every mode', () => {
    for (const mode of ['allow', 'ask'] as const) {
      expect(
        evaluate({ tool: 'shell', args: { command: 'cat ~/.ssh/id_ed25519' } }, ws.context({ mode })),
      ).toMatchObject({
        decision: 'deny',
        reason: 'sensitive_path',
        step: 2,
      });
    }
  });

  it('request_directory_access is checked against sensitive paths, not roots', () => {
    expect(
      evaluate(
        { tool: 'request_directory_access', args: { path: '~/.aws', access: 'read' } },
        ws.context({ mode: 'allow' }),
      ),
    ).toMatchObject({ decision: 'deny', reason: 'sensitive_path' });
    expect(
      evaluate(
        { tool: 'request_directory_access', args: { path: '/srv/data', access: 'read' } },
        ws.context({ mode: 'ask' }),
      ),
    ).toMatchObject({
      decision: 'approval-required',
      targets: [{ argument: 'path', input: '/srv/data', root: null }],
    });
  });
});
