import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decision } from '../../policy/decision.ts';
import { evaluate } from '../../policy/evaluate.ts';
import type { Interaction, Mode, ToolRisk } from '../../policy/risk.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
});
afterAll(() => ws.cleanup());

/** One representative call per risk, inside the read-write primary root. */
const CALLS: Record<ToolRisk, { tool: string; args: Record<string, unknown> }> = {
  read: { tool: 'read_file', args: { path: 'src/a.ts' } },
  'write-local': { tool: 'write_file', args: { path: 'src/a.ts', content: 'x' } },
  exec: { tool: 'shell', args: { command: 'npm test' } },
  external: { tool: 'http_request', args: { url: 'https://example.com/x', method: 'GET' } },
};

/** The mode table of DESIGN.md §4, cell by cell. */
const TABLE: Record<Mode, Record<ToolRisk, [Decision['decision'], Decision['reason']]>> = {
  allow: {
    read: ['allow', 'mode_allow'],
    'write-local': ['allow', 'mode_allow'],
    exec: ['allow', 'mode_allow'],
    external: ['allow', 'mode_allow'],
  },
  ask: {
    read: ['allow', 'mode_allow'],
    'write-local': ['approval-required', 'mode_ask'],
    exec: ['approval-required', 'mode_ask'],
    external: ['approval-required', 'mode_ask'],
  },
  deny: {
    read: ['deny', 'mode_deny'],
    'write-local': ['deny', 'mode_deny'],
    exec: ['deny', 'mode_deny'],
    external: ['deny', 'mode_deny'],
  },
};

const MODES: Mode[] = ['allow', 'ask', 'deny'];
const RISKS: ToolRisk[] = ['read', 'write-local', 'exec', 'external'];
const INTERACTIONS: Interaction[] = ['attended', 'unattended'];

describe('mode table', () => {
  for (const mode of MODES)
    for (const risk of RISKS)
      for (const interaction of INTERACTIONS) {
        const [decision, reason] = TABLE[mode][risk];
        it(`${mode} mode, ${risk} call, ${interaction}: ${decision} (${reason})`, () => {
          const d = evaluate(CALLS[risk], ws.context({ mode, interaction }));
          expect(Decision.parse(d)).toEqual(d);
          expect(d.decision).toBe(decision);
          expect(d.reason).toBe(reason);
          expect(d.risk).toBe(risk);
          expect(d.step).toBe(5);
          expect(d.rule.source).toBe('mode');
          expect(d.humanRequired).toBe(decision === 'approval-required');
        });
      }

  it('allow mode writes only inside writable roots: a read-only root is a plain deny', () => {
    const d = evaluate(
      { tool: 'write_file', args: { path: `${ws.docs}/x.md`, content: 'x' } },
      ws.context({ mode: 'allow' }),
    );
    expect(d).toMatchObject({ decision: 'deny', reason: 'read_only_root', step: 3, humanRequired: false });
  });

  it('allow mode never writes outside the roots', () => {
    const d = evaluate(
      { tool: 'write_file', args: { path: `${ws.dir}/elsewhere.txt`, content: 'x' } },
      ws.context({ mode: 'allow' }),
    );
    expect(d).toMatchObject({ decision: 'deny', reason: 'outside_roots', step: 3 });
  });

  it('allow mode does not bypass a hardline command block', () => {
    const d = evaluate({ tool: 'shell', args: { command: 'rm -rf /' } }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({ decision: 'deny', reason: 'hardline_command', step: 2 });
    expect(d.rule.source).toBe('hardline');
  });

  it('a hardline command is denied as hardline even in deny mode (step 2 comes before the mode)', () => {
    const d = evaluate({ tool: 'shell', args: { command: 'sudo rm -fr /' } }, ws.context({ mode: 'deny' }));
    expect(d).toMatchObject({ decision: 'deny', reason: 'hardline_command', step: 2 });
  });

  it('ask mode auto-allows a read in a read-only root', () => {
    const d = evaluate(
      { tool: 'read_file', args: { path: `${ws.docs}/guide.md` } },
      ws.context({ mode: 'ask' }),
    );
    expect(d).toMatchObject({
      decision: 'allow',
      reason: 'mode_allow',
      targets: [{ root: 'docs', access: 'read' }],
    });
  });

  it('unattended interaction never turns approval-required into allow', () => {
    for (const mode of MODES)
      for (const risk of RISKS) {
        const attended = evaluate(CALLS[risk], ws.context({ mode, interaction: 'attended' }));
        const unattended = evaluate(CALLS[risk], ws.context({ mode, interaction: 'unattended' }));
        expect(unattended).toEqual(attended);
      }
  });

  it('reports the resolved target of a path argument', () => {
    const d = evaluate(CALLS.read, ws.context({ mode: 'allow' }));
    expect(d.targets).toEqual([
      {
        argument: 'path',
        input: 'src/a.ts',
        resolved: `${ws.project}/src/a.ts`,
        root: 'project',
        access: 'read-write',
      },
    ]);
  });

  it('request_directory_access needs a human even in allow mode, and is denied in deny mode', () => {
    const call = { tool: 'request_directory_access', args: { path: '/opt/data', access: 'read' } };
    expect(evaluate(call, ws.context({ mode: 'allow' }))).toMatchObject({
      decision: 'approval-required',
      reason: 'tool_default_ask',
    });
    expect(evaluate(call, ws.context({ mode: 'deny' }))).toMatchObject({
      decision: 'deny',
      reason: 'mode_deny',
    });
  });
});
