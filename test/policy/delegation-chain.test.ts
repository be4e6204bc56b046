/**
 * Delegation end to end through the real engine: a parent → child → grandchild chain where every
 * request asks for more than its parent has, the Explorer profile, and live narrowing (an
 * ancestor's roots or mode shrink while the child runs).
 */
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
  explorerEnvelope,
  guardPathSpace,
  intersect,
  leq,
  type PathSpace,
} from '../../policy/delegation/index.ts';
import { evaluate } from '../../policy/evaluate.ts';
import { createPathGuard, type SnotraPathGuard } from '../../policy/paths/index.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import { createShellAnalyzer } from '../../policy/shell/index.ts';

let dir: string;
let project: string;
let shared: string;
let outside: string;
let guard: SnotraPathGuard;
let space: PathSpace;
let shell: CommandAnalyzer;
const registry = ToolRegistry.withBuiltins();

beforeAll(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'snotra-deleg-chain-')));
  project = path.join(dir, 'project');
  shared = path.join(dir, 'shared');
  outside = path.join(dir, 'outside');
  for (const d of ['project/src/lib', 'project/secrets', 'shared', 'outside', 'state']) {
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  }
  fs.writeFileSync(path.join(project, 'README.md'), 'x');
  fs.writeFileSync(path.join(project, 'src/main.ts'), 'x');
  fs.writeFileSync(path.join(shared, 'notes.txt'), 'x');
  guard = createPathGuard({
    stateDir: path.join(dir, 'state'),
    configFile: path.join(dir, 'state/snotra.config.json'),
    home: path.join(dir, 'home'),
  });
  space = guardPathSpace(guard);
  shell = await createShellAnalyzer();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function parentEnvelope(): AuthorityEnvelope {
  return AuthorityEnvelope.parse({
    mode: 'allow',
    tools: [
      'read_file',
      'list_dir',
      'search_files',
      'git_query',
      'write_file',
      'edit_file',
      'shell',
      'http_request',
      'spawn_agent',
    ],
    rules: [{ id: 'parent.ask-external', risk: 'external', effect: 'ask' }],
    roots: [
      { id: 'project', path: project, access: 'read-write', primary: true, deny: ['secrets/**', '**/*.pem'] },
      { id: 'shared', path: shared, access: 'read' },
    ],
    secrets: ['github-token'],
    standingApprovals: [
      { id: 'sa-api', ownerTaskId: 'task-1', tool: 'http_request', target: 'https://api.example.com/x' },
    ],
    interaction: 'attended',
    mayDelegate: true,
  });
}

function context(e: AuthorityEnvelope, chain: (() => readonly AuthorityEnvelope[]) | null): PolicyContext {
  return {
    registry,
    ...contextFromEnvelope(e),
    sessionId: null,
    taskId: 'task-1',
    sessionApprovals: [],
    paths: guard,
    shell,
    // These laws are about delegation; the sandbox question is tested in test/sandbox.
    sandboxed: true,
    delegation: chain === null ? null : createDelegationGuard(chain, { space, registry }),
  };
}

const read = (p: string): ToolCall => ({ tool: 'read_file', args: { path: p } });
const write = (p: string): ToolCall => ({ tool: 'write_file', args: { path: p, content: 'x' } });
const get = (url: string): ToolCall => ({ tool: 'http_request', args: { url, method: 'GET' } });

describe('parent → child → grandchild, each asking for more than its parent has', () => {
  const opts = () => ({ interaction: 'attended' as const, space });

  function chain() {
    const parent = parentEnvelope();
    const child = intersect(
      parent,
      {
        tools: ['read_file', 'list_dir', 'write_file', 'http_request', 'spawn_agent', 'send_message'],
        roots: [
          { path: path.join(project, 'src'), access: 'read-write' },
          { path: shared, access: 'read-write' },
          { path: outside, access: 'read' },
        ],
        secrets: ['github-token', 'aws-key'],
        standingApprovals: [
          { id: 'sa-api', ownerTaskId: 'task-1', tool: 'http_request', target: 'https://api.example.com/x' },
          { id: 'sa-evil', ownerTaskId: 'task-1', tool: 'http_request', target: 'https://evil.example/' },
        ],
        mayDelegate: true,
      },
      opts(),
    );
    const grandchild = intersect(
      child.envelope,
      {
        mode: 'allow',
        tools: ['read_file', 'write_file', 'edit_file', 'shell', 'http_request'],
        roots: [
          { path: project, access: 'read-write' },
          // Relative to the child's primary root (project/src).
          { path: 'lib', access: 'read-write' },
          { path: shared, access: 'read-write' },
        ],
        secrets: ['github-token', 'aws-key'],
        standingApprovals: [
          { id: 'sa-evil', ownerTaskId: 'task-1', tool: 'http_request', target: 'https://evil.example/' },
        ],
        mayDelegate: true,
      },
      opts(),
    );
    return { parent, child, grandchild };
  }

  it('the child gets only what the parent holds, and every refusal is reported', () => {
    const { parent, child } = chain();
    expect(child.envelope.tools).toEqual([
      'http_request',
      'list_dir',
      'read_file',
      'spawn_agent',
      'write_file',
    ]);
    expect(child.envelope.roots).toEqual([
      {
        id: 'project/src',
        path: path.join(project, 'src'),
        access: 'read-write',
        primary: true,
        source: 'workspace',
        deny: ['**/*.pem', '*.pem'],
      },
      { id: 'shared', path: shared, access: 'read', primary: false, source: 'workspace' },
    ]);
    expect(child.envelope.rules).toEqual(parent.rules);
    expect(child.envelope.secrets).toEqual(['github-token']);
    expect(child.envelope.standingApprovals.map((a) => a.id)).toEqual(['sa-api']);
    expect(child.envelope.mayDelegate).toBe(true);
    expect(child.narrowed).toEqual([
      { kind: 'tool', item: 'send_message', reason: 'not_in_parent_tools' },
      { kind: 'root', item: outside, reason: 'outside_parent_roots' },
      { kind: 'access', item: shared, reason: 'parent_root_read_only' },
      { kind: 'secret', item: 'aws-key', reason: 'not_held_by_parent' },
      { kind: 'standing-approval', item: 'sa-evil', reason: 'not_held_by_parent' },
    ]);
    expect(leq(child.envelope, parent, space)).toBe(true);
  });

  it('the grandchild gets only what the child holds (not what the grandparent holds), and every refusal is reported', () => {
    const { parent, child, grandchild } = chain();
    expect(grandchild.envelope.tools).toEqual(['http_request', 'read_file', 'write_file']);
    expect(grandchild.envelope.roots.map((r) => [r.id, r.path, r.access, r.primary])).toEqual([
      ['project/src/lib', path.join(project, 'src/lib'), 'read-write', true],
      ['shared', shared, 'read', false],
    ]);
    expect(grandchild.envelope.secrets).toEqual(['github-token']);
    expect(grandchild.envelope.standingApprovals).toEqual([]);
    expect(grandchild.envelope.mayDelegate).toBe(true);
    expect(grandchild.narrowed).toEqual([
      { kind: 'tool', item: 'edit_file', reason: 'not_in_parent_tools' },
      { kind: 'tool', item: 'shell', reason: 'not_in_parent_tools' },
      { kind: 'root', item: project, reason: 'outside_parent_roots' },
      { kind: 'access', item: shared, reason: 'parent_root_read_only' },
      { kind: 'secret', item: 'aws-key', reason: 'not_held_by_parent' },
      { kind: 'standing-approval', item: 'sa-evil', reason: 'not_held_by_parent' },
    ]);
    expect(leq(grandchild.envelope, child.envelope, space)).toBe(true);
    expect(leq(grandchild.envelope, parent, space)).toBe(true);
  });

  it('calls using the extras are refused by evaluate, each with its reason', () => {
    const { parent, child, grandchild } = chain();
    const ctx = context(grandchild.envelope, () => [parent, child.envelope]);
    const expectations: [ToolCall, string, string][] = [
      [{ tool: 'shell', args: { command: 'ls' } }, 'tool_not_granted', 'metadata.tool-not-granted'],
      [
        { tool: 'edit_file', args: { path: 'x', old: 'a', new: 'b' } },
        'tool_not_granted',
        'metadata.tool-not-granted',
      ],
      [
        { tool: 'send_message', args: { channel: '#ops', text: 'hi' } },
        'tool_not_granted',
        'metadata.tool-not-granted',
      ],
      [
        { tool: 'spawn_agent', args: { profile: 'x', task: 'y' } },
        'tool_not_granted',
        'metadata.tool-not-granted',
      ],
      [read(path.join(project, 'README.md')), 'outside_roots', 'roots.outside'],
      [read(path.join(outside, 'x')), 'outside_roots', 'roots.outside'],
      [write(path.join(shared, 'notes.txt')), 'read_only_root', 'roots.read-only'],
      [read(path.join(project, 'src/lib/server.pem')), 'path_denied', 'roots.deny-glob'],
    ];
    for (const [call, reason, rule] of expectations) {
      expect(evaluate(call, ctx), JSON.stringify(call)).toMatchObject({
        decision: 'deny',
        reason,
        rule: { id: rule },
      });
    }
    // The standing approval the grandchild asked for was refused: that target needs a human.
    expect(evaluate(get('https://evil.example/'), ctx)).toMatchObject({
      decision: 'approval-required',
      reason: 'tool_rule_ask',
    });
    // What it was granted works.
    expect(evaluate(write(path.join(project, 'src/lib/a.ts')), ctx)).toMatchObject({ decision: 'allow' });
    expect(evaluate(read('README.md'), context(parent, null))).toMatchObject({ decision: 'allow' });
    expect(evaluate({ tool: 'list_dir', args: { path: '.' } }, ctx)).toMatchObject({
      decision: 'deny',
      reason: 'tool_not_granted',
    });
    expect(
      evaluate(
        get('https://api.example.com/x'),
        context(child.envelope, () => [parent]),
      ),
    ).toMatchObject({
      decision: 'allow',
      reason: 'standing_approval',
    });
  });

  it('an envelope that skipped intersect is still held inside every ancestor by step 4', () => {
    const { parent, child } = chain();
    const forged = AuthorityEnvelope.parse({
      ...parentEnvelope(),
      tools: ['read_file', 'write_file', 'shell', 'send_message', 'spawn_agent'],
      roots: [
        { id: 'all', path: dir, access: 'read-write', primary: true },
        { id: 'lib', path: path.join(project, 'src/lib'), access: 'read-write' },
      ],
      mode: 'allow',
      rules: [],
    });
    const ctx = context(forged, () => [parent, child.envelope]);
    const expectations: [ToolCall, string][] = [
      [
        { tool: 'shell', args: { command: 'ls', cwd: path.join(project, 'src/lib') } },
        'delegation.tool-not-delegated',
      ],
      [{ tool: 'send_message', args: { channel: '#ops', text: 'hi' } }, 'delegation.tool-not-delegated'],
      [read(path.join(project, 'README.md')), 'delegation.outside-delegated-roots'],
      [read(path.join(outside, 'x')), 'delegation.outside-delegated-roots'],
      [write(path.join(shared, 'notes.txt')), 'delegation.read-only-delegated-root'],
      [read(path.join(project, 'src/key.pem')), 'delegation.path-denied'],
    ];
    for (const [call, rule] of expectations) {
      expect(evaluate(call, ctx), JSON.stringify(call)).toMatchObject({
        decision: 'deny',
        reason: 'exceeds_parent_authority',
        rule: { id: rule, source: 'delegation' },
        step: 4,
      });
    }
    const noSpawn = { ...child.envelope, mayDelegate: false };
    expect(
      evaluate(
        { tool: 'spawn_agent', args: { profile: 'x', task: 'y' } },
        context(forged, () => [parent, noSpawn]),
      ),
    ).toMatchObject({
      reason: 'exceeds_parent_authority',
      rule: { id: 'delegation.delegation-not-granted' },
    });
    expect(evaluate(write(path.join(project, 'src/lib/a.ts')), ctx)).toMatchObject({ decision: 'allow' });
  });
});

describe('Explorer', () => {
  it('a parent in allow mode with shell, writes and read-write roots gives a read-only Explorer', () => {
    const parent = parentEnvelope();
    const explorer = explorerEnvelope(parent);
    expect(explorer.tools).toEqual(['git_query', 'list_dir', 'read_file', 'search_files']);
    expect(explorer.roots.every((r) => r.access === 'read')).toBe(true);
    expect(explorer.roots.map((r) => r.path)).toEqual([project, shared]);
    expect(explorer).toMatchObject({ mode: 'allow', mayDelegate: false, secrets: [], standingApprovals: [] });
    expect(explorer.rules.map((r) => r.id)).toEqual([
      'parent.ask-external',
      'explorer.no-write',
      'explorer.no-exec',
      'explorer.no-external',
      'explorer.no-spawn',
    ]);
    expect(leq(explorer, parent, space)).toBe(true);
  });

  it('cannot write, run shell, send or spawn; can read and map', () => {
    const parent = parentEnvelope();
    const ctx = context(explorerEnvelope(parent), () => [parent]);
    const refused: ToolCall[] = [
      write(path.join(project, 'src/x.ts')),
      { tool: 'edit_file', args: { path: path.join(project, 'src/main.ts'), old: 'x', new: 'y' } },
      { tool: 'shell', args: { command: 'ls' } },
      get('https://api.example.com/x'),
      { tool: 'send_message', args: { channel: '#ops', text: 'hi' } },
      { tool: 'spawn_agent', args: { profile: 'explorer', task: 'more' } },
    ];
    for (const call of refused) {
      expect(evaluate(call, ctx), call.tool).toMatchObject({
        decision: 'deny',
        reason: 'tool_not_granted',
        step: 1,
      });
    }
    for (const call of [
      read(path.join(project, 'src/main.ts')),
      { tool: 'list_dir', args: { path: project } },
      { tool: 'search_files', args: { path: shared, pattern: 'x' } },
      { tool: 'git_query', args: { args: ['status'] } },
    ]) {
      expect(evaluate(call, ctx), call.tool).toMatchObject({ decision: 'allow' });
    }
  });

  it('the Explorer lacks a read tool its parent lacks, and keeps the parent mode and deny globs', () => {
    const parent = { ...parentEnvelope(), mode: 'ask' as const, tools: ['read_file', 'shell'] };
    const explorer = explorerEnvelope(parent);
    expect(explorer.tools).toEqual(['read_file']);
    expect(explorer.mode).toBe('ask');
    const ctx = context(explorer, () => [parent]);
    expect(evaluate(read(path.join(project, 'secrets/token')), ctx)).toMatchObject({ reason: 'path_denied' });
    expect(evaluate({ tool: 'list_dir', args: { path: project } }, ctx)).toMatchObject({
      reason: 'tool_not_granted',
    });
  });
});

describe('live narrowing: the chain is read on every call', () => {
  function running() {
    const original = parentEnvelope();
    let now = original;
    const child = intersect(
      original,
      { roots: [{ path: project }, { path: shared }] },
      { interaction: 'attended', space },
    ).envelope;
    const ctx = context(child, () => [now]);
    return {
      original,
      child,
      ctx,
      set(e: AuthorityEnvelope) {
        now = e;
      },
      effective: () => context(effectiveEnvelope([now], child, space), () => [now]),
    };
  }

  it('removing a root from the parent makes the child’s next call under it deny', () => {
    const run = running();
    const call = read(path.join(shared, 'notes.txt'));
    expect(evaluate(call, run.ctx)).toMatchObject({ decision: 'allow' });
    run.set({ ...run.original, roots: run.original.roots.filter((r) => r.id !== 'shared') });
    expect(evaluate(call, run.ctx)).toMatchObject({
      decision: 'deny',
      reason: 'exceeds_parent_authority',
      rule: { id: 'delegation.outside-delegated-roots', source: 'delegation' },
      step: 4,
    });
    // Rebuilt from the live effective envelope, the root is simply gone.
    expect(evaluate(call, run.effective())).toMatchObject({
      decision: 'deny',
      reason: 'outside_roots',
      step: 3,
    });
    expect(evaluate(read(path.join(project, 'README.md')), run.ctx)).toMatchObject({ decision: 'allow' });
  });

  it('switching the parent to deny mode denies every call of the child', () => {
    const run = running();
    run.set({ ...run.original, mode: 'deny' });
    expect(evaluate(read(path.join(project, 'README.md')), run.ctx)).toMatchObject({
      decision: 'deny',
      reason: 'exceeds_parent_authority',
      rule: { id: 'delegation.mode-deny' },
    });
  });

  it('a parent root turned read-only, a new deny glob, a new deny rule, a tool taken away', () => {
    const run = running();
    const target = path.join(project, 'src/new.ts');
    expect(evaluate(write(target), run.ctx)).toMatchObject({ decision: 'allow' });
    const roots = run.original.roots;
    run.set({ ...run.original, roots: roots.map((r) => ({ ...r, access: 'read' as const })) });
    expect(evaluate(write(target), run.ctx)).toMatchObject({
      reason: 'exceeds_parent_authority',
      rule: { id: 'delegation.read-only-delegated-root' },
    });
    run.set({ ...run.original, roots: roots.map((r) => ({ ...r, deny: ['src/**'] })) });
    expect(evaluate(write(target), run.ctx)).toMatchObject({ rule: { id: 'delegation.path-denied' } });
    run.set({ ...run.original, rules: [{ id: 'parent.no-writes', risk: 'write-local', effect: 'deny' }] });
    expect(evaluate(write(target), run.ctx)).toMatchObject({ rule: { id: 'delegation.rule-deny' } });
    run.set({ ...run.original, tools: ['read_file'] });
    expect(evaluate(write(target), run.ctx)).toMatchObject({ rule: { id: 'delegation.tool-not-delegated' } });
  });

  it('a parent switched to ask makes the child ask, through its effective envelope', () => {
    const run = running();
    run.set({ ...run.original, mode: 'ask' });
    expect(evaluate(write(path.join(project, 'src/new.ts')), run.effective())).toMatchObject({
      decision: 'approval-required',
      reason: 'mode_ask',
    });
  });
});
