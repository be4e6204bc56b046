import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelProvider, ModelStepRequest } from '../../actors/model/provider.ts';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { Observation } from '../../machines/run/types.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

const call = (id: string, tool: string, args: unknown) => ({
  kind: 'calls' as const,
  calls: [{ id, tool, args }],
});

/** Every observation a run's transcript holds, from the stored snapshot. */
function observations(runtime: Runtime, runId: string): Observation[] {
  const ctx = (
    runtimeInternals(runtime).store.snapshots.get(runId)?.snapshot as {
      context?: { transcript: { role: string; observation?: Observation }[] };
    }
  ).context;
  return (ctx?.transcript ?? []).flatMap((e) =>
    e.role === 'observation' && e.observation ? [e.observation] : [],
  );
}

/** A scripted model that holds one agent's step until the test opens the gate. */
class GatedModel implements ModelProvider {
  #open: () => void = () => {};
  readonly gate = new Promise<void>((resolve) => (this.#open = resolve));
  reached = false;
  constructor(
    private readonly inner: ScriptedModel,
    private readonly agentId: string,
    private readonly gateStep: number,
  ) {}
  open(): void {
    this.#open();
  }
  async step(req: ModelStepRequest) {
    if (req.agentId === this.agentId && req.step === this.gateStep) {
      this.reached = true;
      await this.gate;
    }
    return this.inner.step(req);
  }
}

describe('delegation', () => {
  it('an Explorer cannot write, run shell, send or spawn — even under an allow-mode parent with shell — and maps the workspace', async () => {
    fx = runtimeFixture({ agents: { lead: { mode: 'allow' } } });
    mkdirSync(join(fx.project, 'src'));
    writeFileSync(join(fx.project, 'src', 'index.ts'), 'export {}\n');
    writeFileSync(join(fx.project, 'README.md'), '# demo\n');
    const denied = (tool: string): ScriptedStep['expect'] => ({ kind: 'tool.denied', tool });
    const model = new ScriptedModel({
      lead: [
        {
          respond: call('s1', 'spawn_agent', {
            profile: 'explorer',
            task: 'map the codebase',
            tools: ['read_file', 'list_dir', 'shell', 'write_file'],
            roots: [{ path: fx.project, access: 'read-write' }],
          }),
        },
        {
          expect: { kind: 'tool.result', tool: 'spawn_agent', contains: 'src' },
          respond: { kind: 'final', text: 'mapped' },
        },
      ],
      explorer: [
        { respond: call('e1', 'write_file', { path: 'pwned.txt', content: 'x' }) },
        { expect: denied('write_file'), respond: call('e2', 'shell', { command: 'ls' }) },
        {
          expect: denied('shell'),
          respond: call('e3', 'http_request', { url: 'https://example.com', method: 'POST' }),
        },
        {
          expect: denied('http_request'),
          respond: call('e4', 'send_message', { channel: '#x', text: 'hi' }),
        },
        {
          expect: denied('send_message'),
          respond: call('e5', 'spawn_agent', { profile: 'explorer', task: 'recurse' }),
        },
        { expect: denied('spawn_agent'), respond: call('e6', 'list_dir', { path: '.' }) },
        {
          expect: { kind: 'tool.result', tool: 'list_dir', contains: 'README.md' },
          respond: { kind: 'final', text: 'layout: README.md, src/index.ts' },
        },
      ],
    });
    rt = await fx.start(model);
    const { runId, outcome } = await rt.chat('lead', 'map this codebase');
    expect(outcome).toEqual({ status: 'completed', reason: 'final_answer', text: 'mapped' });
    model.assertConsumed('lead', runId);
    const childRunId = `${runId}/s1`;
    model.assertConsumed('explorer', childRunId);

    const denials = observations(rt, childRunId).filter((o) => o.kind === 'tool.denied');
    expect(denials.map((o) => o.tool)).toEqual([
      'write_file',
      'shell',
      'http_request',
      'send_message',
      'spawn_agent',
    ]);
    for (const d of denials)
      expect(['tool_not_granted', 'exceeds_parent_authority', 'tool_rule_deny']).toContain(
        d.kind === 'tool.denied' && d.reason,
      );
    expect(existsSync(join(fx.project, 'pwned.txt'))).toBe(false);

    const result = observations(rt, runId).find((o) => o.kind === 'tool.result' && o.tool === 'spawn_agent');
    const content = JSON.parse(String(result?.kind === 'tool.result' ? result.content : '{}')) as {
      childRunId: string;
      summary: string;
      narrowed: { kind: string; item: string; reason: string }[];
    };
    expect(content.childRunId).toBe(childRunId);
    expect(content.summary).toContain('src/index.ts');
    expect(content.narrowed).toEqual(
      expect.arrayContaining([
        { kind: 'tool', item: 'shell', reason: 'explorer_profile' },
        { kind: 'tool', item: 'write_file', reason: 'explorer_profile' },
        { kind: 'access', item: fx.project, reason: 'explorer_profile' },
      ]),
    );
    const spawned = runtimeInternals(rt)
      .store.audit.list({ runId: childRunId })
      .find((e) => e.kind === 'agent_spawned');
    expect(spawned?.detail).toMatchObject({
      parentRunId: runId,
      profile: 'explorer',
      granted: { tools: ['git_query', 'list_dir', 'read_file', 'search_files'] },
    });
    // As a conversation (GET /v1/runs/:id/conversation), the child's run is nested at the call that started it.
    const convo = rt.read.conversation(runId);
    expect(convo?.items[0]).toEqual({ kind: 'user', text: 'map this codebase' });
    const spawn = convo?.items.flatMap((i) => (i.kind === 'assistant' ? i.calls : []))[0];
    expect(spawn).toMatchObject({ id: 's1', tool: 'spawn_agent', decision: { decision: 'allow' } });
    expect(spawn?.result?.kind).toBe('tool.result');
    expect(spawn?.child).toMatchObject({ runId: childRunId, agentId: 'explorer', status: 'completed' });
    const childCalls = spawn?.child?.items.flatMap((i) => (i.kind === 'assistant' ? i.calls : [])) ?? [];
    expect(childCalls.map((c) => c.id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    expect(childCalls[0]).toMatchObject({ tool: 'write_file', decision: { decision: 'deny' } });
    expect(childCalls[0]?.result?.kind).toBe('tool.denied');
    expect(childCalls[5]?.result?.kind).toBe('tool.result');
    expect(rt.read.conversation('lead:no-such-run')).toBeNull();
    // The child's budget was carved out of the parent's: the parent's count includes the child's usage.
    const parentCtx = runtimeInternals(rt).runs.contextOf(runId);
    expect(parentCtx?.used.toolCalls).toBeGreaterThanOrEqual(1 + 6);
  });

  it('a sub-agent delegates again only when its profile says mayDelegate; one without it, and the model asking for it, are refused', async () => {
    fx = runtimeFixture({
      agents: {
        lead: { mode: 'allow' },
        relay: { mode: 'allow', tools: ['spawn_agent', 'list_dir'], mayDelegate: true },
        plain: { mode: 'allow', tools: ['spawn_agent', 'list_dir'] },
        leaf: { mode: 'allow', tools: ['list_dir'] },
      },
    });
    const spawned = (id: string): ScriptedStep['expect'] => ({
      kind: 'tool.result',
      tool: 'spawn_agent',
      contains: id,
    });
    const model = new ScriptedModel({
      lead: [
        // The model cannot grant delegation itself: the argument does not exist.
        { respond: call('x0', 'spawn_agent', { profile: 'plain', task: 'go', mayDelegate: true }) },
        {
          expect: { kind: 'tool.denied', tool: 'spawn_agent', reason: 'invalid_arguments' },
          respond: call('s1', 'spawn_agent', { profile: 'relay', task: 'go deeper' }),
        },
        {
          expect: spawned('completed'),
          respond: call('s2', 'spawn_agent', { profile: 'plain', task: 'try' }),
        },
        { expect: spawned('delegation_not_granted'), respond: { kind: 'final', text: 'done' } },
      ],
      relay: [
        { respond: call('r1', 'spawn_agent', { profile: 'leaf', task: 'list' }) },
        { expect: spawned('completed'), respond: { kind: 'final', text: 'relayed' } },
      ],
      plain: [
        { respond: call('p1', 'spawn_agent', { profile: 'leaf', task: 'list' }) },
        {
          expect: { kind: 'tool.denied', tool: 'spawn_agent' },
          respond: { kind: 'final', text: 'could not' },
        },
      ],
      leaf: [
        { respond: call('l1', 'list_dir', { path: '.' }) },
        { expect: { kind: 'tool.result', tool: 'list_dir' }, respond: { kind: 'final', text: 'listed' } },
      ],
    });
    rt = await fx.start(model);
    const { runId, outcome } = await rt.chat('lead', 'delegate twice');
    expect(outcome).toEqual({ status: 'completed', reason: 'final_answer', text: 'done' });
    const store = runtimeInternals(rt).store;
    expect(store.snapshots.get(`${runId}/x0`)).toBeNull();
    // relay may delegate: its child runs, nested under it.
    expect(store.snapshots.get(`${runId}/s1/r1`)).toMatchObject({ agentId: 'leaf', status: 'completed' });
    model.assertConsumed('leaf', `${runId}/s1/r1`);
    const grantOf = (child: string) =>
      (store.audit.list({ runId: child }).find((e) => e.kind === 'agent_spawned')?.detail ?? {}) as {
        granted?: { tools?: string[] };
      };
    expect(grantOf(`${runId}/s1`).granted?.tools).toContain('spawn_agent');
    expect(grantOf(`${runId}/s1/r1`).granted?.tools).not.toContain('spawn_agent');
    // plain may not: spawn_agent is taken from it and its try is denied; nothing runs below it.
    expect(grantOf(`${runId}/s2`).granted?.tools).not.toContain('spawn_agent');
    const denied = observations(rt, `${runId}/s2`).find((o) => o.kind === 'tool.denied');
    expect(denied).toMatchObject({ tool: 'spawn_agent' });
    expect(store.snapshots.get(`${runId}/s2/p1`)).toBeNull();
  });

  it('live narrowing: removing a root from the parent while a child runs makes the child’s next call under it deny', async () => {
    fx = runtimeFixture(
      {
        workspace: {
          roots: [
            { id: 'project', path: 'project', access: 'read-write', primary: true },
            { id: 'data', path: 'data', access: 'read' },
          ],
        },
        agents: { lead: { mode: 'allow' }, helper: { mode: 'allow', tools: ['read_file'] } },
      },
      ['data'],
    );
    writeFileSync(join(fx.dir, 'data', 'x.csv'), 'a,b\n');
    const inner = new ScriptedModel({
      lead: [
        { respond: call('s1', 'spawn_agent', { profile: 'helper', task: 'read the data twice' }) },
        { expect: { kind: 'tool.result', tool: 'spawn_agent' }, respond: { kind: 'final', text: 'done' } },
      ],
      helper: [
        { respond: call('h1', 'read_file', { path: join(fx.dir, 'data', 'x.csv') }) },
        {
          expect: { kind: 'tool.result', contains: 'a,b' },
          respond: call('h2', 'read_file', { path: join(fx.dir, 'data', 'x.csv') }),
        },
        {
          expect: { kind: 'tool.denied', tool: 'read_file' },
          respond: { kind: 'final', text: 'lost access' },
        },
      ],
    });
    const model = new GatedModel(inner, 'helper', 1);
    rt = await fx.start(model);
    const done = rt.chat('lead', 'go');
    await eventually(() => model.reached, 10_000, 'the child to finish its first read');
    rt.authority.setRoots(
      runtimeInternals(rt)
        .loaded.config.workspace.roots.filter((r) => r.id !== 'data')
        .map((r) => ({ ...r, primary: true, source: 'workspace' as const })),
      'alice',
    );
    model.open();
    const { runId, outcome } = await done;
    expect(outcome.status).toBe('completed');
    const childObs = observations(rt, `${runId}/s1`);
    expect(childObs.map((o) => o.kind)).toEqual(['tool.result', 'tool.denied']);
    const denial = childObs[1];
    expect(denial?.kind === 'tool.denied' && denial.reason).toMatch(
      /^(outside_roots|exceeds_parent_authority)$/,
    );
    expect(
      runtimeInternals(rt)
        .store.audit.list()
        .some((e) => e.kind === 'root_changed'),
    ).toBe(true);
  });

  it('a sub-agent of an unattended task parks its approval in the Inbox with parent ids, survives restart, resumes once', async () => {
    fx = runtimeFixture({
      agents: { lead: { mode: 'ask' }, notifier: { mode: 'ask', tools: ['send_message'] } },
    });
    const model = new ScriptedModel({
      lead: [
        { respond: call('s1', 'spawn_agent', { profile: 'notifier', task: 'tell #ops' }) },
        {
          expect: { kind: 'tool.result', tool: 'spawn_agent', contains: 'completed' },
          respond: { kind: 'final', text: 'delegated' },
        },
      ],
      notifier: [
        { respond: call('n1', 'send_message', { channel: '#ops', text: 'done' }) },
        { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'sent' } },
      ],
    });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('lead', 'nightly', 'delegate the notification');
    const childRunId = `${runId}/s1`;
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({ taskId: 'nightly' })[0],
      10_000,
      'the child approval',
    );
    expect(pending).toMatchObject({
      runId: childRunId,
      agentId: 'notifier',
      parentRunId: runId,
      parentAgentId: 'lead',
      tool: 'send_message',
    });
    await eventually(
      () => !(rt && runtimeInternals(rt))?.runs.isLive(childRunId),
      5_000,
      'the child to park',
    );

    await rt.stop();
    rt = await fx.start(model);
    expect(fx.sent()).toEqual([]);
    expect(rt.decide(pending.id, 'approved', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(runId)).toEqual({
      status: 'completed',
      reason: 'final_answer',
      text: 'delegated',
    });
    expect(fx.sent()).toEqual(['#ops done']);
    await rt.stop();
    rt = await fx.start(model);
    await new Promise((r) => setTimeout(r, 200));
    expect(fx.sent()).toEqual(['#ops done']);
  });
});
