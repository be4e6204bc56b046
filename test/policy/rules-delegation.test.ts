/** Argument rules (command, path, target) of a parent bind its sub-agents, whatever they request. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyContext, ToolCall } from '../../policy/context.ts';
import {
  AuthorityEnvelope,
  contextFromEnvelope,
  createDelegationGuard,
  effectiveEnvelope,
  guardPathSpace,
  intersect,
  leq,
  type PathSpace,
} from '../../policy/delegation/index.ts';
import { ruleKey } from '../../policy/delegation/lattice.ts';
import { evaluate } from '../../policy/evaluate.ts';
import { createPathGuard, type SnotraPathGuard } from '../../policy/paths/index.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import { createShellAnalyzer } from '../../policy/shell/index.ts';
import { withSimpleCommands } from '../../policy/shell/simple-commands.ts';

let dir: string;
let project: string;
let guard: SnotraPathGuard;
let space: PathSpace;
let shell: CommandAnalyzer;
const registry = ToolRegistry.withBuiltins();

beforeAll(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'snotra-rules-deleg-')));
  project = path.join(dir, 'project');
  fs.mkdirSync(path.join(project, 'migrations'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'state'));
  guard = createPathGuard({
    stateDir: path.join(dir, 'state'),
    configFile: path.join(dir, 'state/snotra.config.json'),
    home: path.join(dir, 'home'),
  });
  space = guardPathSpace(guard);
  shell = await withSimpleCommands(await createShellAnalyzer());
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const PARENT_RULES = [
  { id: 'no-push', command: 'git push', effect: 'deny' },
  { id: 'no-push', command: 'npm publish', effect: 'deny' },
  { id: 'no-migration-writes', path: 'migrations/**', access: 'write', effect: 'deny' },
  { id: 'no-example', target: '*.example.com', effect: 'deny' },
] as const;

function parent(): AuthorityEnvelope {
  return AuthorityEnvelope.parse({
    mode: 'allow',
    tools: ['read_file', 'write_file', 'shell', 'http_request', 'spawn_agent'],
    rules: PARENT_RULES,
    roots: [{ id: 'project', path: project, access: 'read-write', primary: true }],
    secrets: [],
    standingApprovals: [],
    interaction: 'attended',
    mayDelegate: true,
  });
}

function childContext(): PolicyContext {
  const p = parent();
  const child = intersect(
    p,
    { mode: 'allow', tools: ['read_file', 'write_file', 'shell', 'http_request'], rules: [] },
    { interaction: 'attended', space },
  ).envelope;
  const chain = () => [p];
  const effective = effectiveEnvelope(chain(), child, space);
  return {
    registry,
    ...contextFromEnvelope(effective),
    sessionId: null,
    taskId: null,
    sessionApprovals: [],
    paths: guard,
    shell,
    sandboxed: true,
    delegation: createDelegationGuard(chain, { space, registry }),
  };
}

describe('argument rules under delegation', () => {
  it('two rules differing only in an argument matcher stay two rules (ruleKey)', () => {
    const [a, b] = PARENT_RULES;
    expect(ruleKey(a)).not.toBe(ruleKey(b));
    expect(ruleKey({ id: 'x', tool: 'shell', effect: 'deny' })).toBe(
      JSON.stringify(['x', 'shell', null, null, 'deny']),
    );
    const p = parent();
    const child = intersect(p, { rules: [] }, { interaction: 'attended', space }).envelope;
    expect(child.rules).toHaveLength(PARENT_RULES.length);
    expect(leq(child, p, space)).toBe(true);
    // A child without one of the parent's argument rules is not below the parent.
    expect(leq({ ...child, rules: child.rules.slice(1) }, p, space)).toBe(false);
  });

  const cases: [ToolCall, string][] = [
    [{ tool: 'shell', args: { command: 'sudo git push origin' } }, 'deny'],
    [{ tool: 'shell', args: { command: 'npm --registry r publish' } }, 'deny'],
    [{ tool: 'shell', args: { command: 'git status' } }, 'allow'],
    [{ tool: 'write_file', args: { path: 'migrations/1.sql', content: 'x' } }, 'deny'],
    [{ tool: 'write_file', args: { path: 'src.sql', content: 'x' } }, 'allow'],
    [{ tool: 'http_request', args: { url: 'https://api.example.com/', method: 'GET' } }, 'deny'],
    [{ tool: 'http_request', args: { url: 'https://example.org/', method: 'GET' } }, 'allow'],
  ];
  for (const [call, decision] of cases) {
    it(`a child's ${call.tool} ${JSON.stringify(call.args)} is ${decision}`, () => {
      const d = evaluate(call, childContext());
      expect(d.decision).toBe(decision);
      if (decision === 'deny') expect(d.reason).toBe('tool_rule_deny');
    });
  }
});
