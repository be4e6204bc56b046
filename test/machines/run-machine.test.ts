import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, toPromise, waitFor } from 'xstate';
import type { Decision } from '../../policy/decision.ts';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { runMachine } from '../../machines/run/machine.ts';
import type {
  ExecuteInput,
  Observation,
  OpenApprovalInput,
  ProposedCall,
  RunContext,
  RunInput,
} from '../../machines/run/types.ts';

const decision = (kind: Decision['decision'], reason: Decision['reason']): Decision => ({
  decision: kind,
  reason,
  risk: 'external',
  rule: { id: `mode.${kind}`, source: 'mode' },
  targets: [],
  humanRequired: kind === 'approval-required',
  step: 5,
});

/** Wires the pure machine with a scripted model and a decision table keyed by tool name. */
function wired(script: ScriptedStep[], decisions: Record<string, Decision>, log: string[]) {
  const model = new ScriptedModel({ a: script });
  return {
    model,
    machine: runMachine.provide({
      actors: {
        modelStep: fromPromise(async ({ input }: { input: { context: RunContext } }) =>
          model.step({
            runId: input.context.runId,
            agentId: input.context.agentId,
            step: input.context.steps,
            transcript: input.context.transcript,
          }),
        ),
        decide: fromPromise(async ({ input }: { input: { context: RunContext; call: ProposedCall } }) => {
          const d = decisions[input.call.tool];
          if (!d) throw new Error(`no decision for ${input.call.tool}`);
          return d;
        }),
        openApproval: fromPromise(async ({ input }: { input: OpenApprovalInput }) => {
          log.push(`approval:${input.approvalId}`);
          return { approvalId: input.approvalId };
        }),
        executeTool: fromPromise(async ({ input }: { input: ExecuteInput }): Promise<Observation> => {
          log.push(`exec:${input.call.tool}:${input.idempotencyKey}`);
          return { kind: 'tool.result', callId: input.call.id, tool: input.call.tool, content: 'ok' };
        }),
      },
      actions: { audit: (_, params) => void log.push(`audit:${params.step}`) },
    }),
  };
}

const input = (over: Partial<RunInput> = {}): RunInput => ({
  runId: 'r1',
  agentId: 'a',
  sessionId: 's',
  taskId: null,
  parentRunId: null,
  surface: 'test',
  interaction: 'unattended',
  message: 'hello',
  budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000 },
  startedAt: 0,
  ...over,
});

const call = (id: string, tool: string, args: unknown = {}) => ({ id, tool, args });

describe('run machine', () => {
  it('runs allowed calls and completes with the final answer', async () => {
    const log: string[] = [];
    const { machine, model } = wired(
      [
        { respond: { kind: 'calls', calls: [call('c1', 'read_file')] } },
        { expect: { kind: 'tool.result', tool: 'read_file' }, respond: { kind: 'final', text: 'done' } },
      ],
      { read_file: decision('allow', 'mode_allow') },
      log,
    );
    const actor = createActor(machine, { input: input() }).start();
    const out = await toPromise(actor);
    expect(out).toEqual({ status: 'completed', reason: 'final_answer', text: 'done' });
    expect(log).toEqual([
      'audit:proposed',
      'audit:policy_decided',
      'exec:read_file:call:r1:c1',
      'audit:run_completed',
    ]);
    model.assertConsumed('a', 'r1');
  });

  it('returns a denial to the model as tool.denied and lets it continue', async () => {
    const log: string[] = [];
    const { machine, model } = wired(
      [
        { respond: { kind: 'calls', calls: [call('c1', 'shell', { command: 'rm -rf /' })] } },
        {
          expect: { kind: 'tool.denied', reason: 'hardline_command' },
          respond: { kind: 'final', text: 'ok, I will not' },
        },
      ],
      { shell: decision('deny', 'hardline_command') },
      log,
    );
    const out = await toPromise(createActor(machine, { input: input() }).start());
    expect(out.status).toBe('completed');
    expect(log).not.toContain('exec:shell:call:r1:c1');
    model.assertConsumed('a', 'r1');
  });

  it('stops the same denied call when it is repeated, before the budget runs out', async () => {
    const same = { kind: 'calls' as const, calls: [call('c', 'shell', { command: 'rm -rf /' })] };
    const { machine } = wired(
      [
        { respond: same },
        { respond: { ...same, calls: [call('c2', 'shell', { command: 'rm -rf /' })] } },
        { respond: { kind: 'final', text: 'never' } },
      ],
      { shell: decision('deny', 'hardline_command') },
      [],
    );
    const actor = createActor(machine, { input: input() }).start();
    expect(await toPromise(actor)).toEqual({
      status: 'failed',
      reason: 'repeated_denied_call',
      message: 'the model proposed the same denied call again',
    });
    expect(actor.getSnapshot().context.used.toolCalls).toBe(2);
  });

  it('fails when the model-call or tool-call budget is spent', async () => {
    const loop = { kind: 'calls' as const, calls: [call('c', 'read_file')] };
    const { machine } = wired(
      [{ respond: loop }, { respond: loop }, { respond: loop }],
      { read_file: decision('allow', 'mode_allow') },
      [],
    );
    expect(
      await toPromise(
        createActor(machine, {
          input: input({ budget: { modelCalls: 2, toolCalls: 10, wallTimeMs: 1 } }),
        }).start(),
      ),
    ).toEqual({
      status: 'failed',
      reason: 'budget_model_calls',
      message: 'the run used its whole model-call budget (2)',
    });
    const two = {
      kind: 'calls' as const,
      calls: [call('c1', 'read_file'), call('c2', 'read_file'), call('c3', 'read_file')],
    };
    const { machine: m2 } = wired([{ respond: two }], { read_file: decision('allow', 'mode_allow') }, []);
    expect(
      await toPromise(
        createActor(m2, { input: input({ budget: { modelCalls: 5, toolCalls: 2, wallTimeMs: 1 } }) }).start(),
      ),
    ).toEqual({
      status: 'failed',
      reason: 'budget_tool_calls',
      message: 'the run used its whole tool-call budget (2)',
    });
  });

  it('parks on approval, survives a snapshot round trip, and executes once after approval', async () => {
    const log: string[] = [];
    const { machine, model } = wired(
      [
        { respond: { kind: 'calls', calls: [call('c1', 'send_message', { channel: '#ops', text: 'hi' })] } },
        { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'sent' } },
      ],
      { send_message: decision('approval-required', 'mode_ask') },
      log,
    );
    const first = createActor(machine, { input: input() }).start();
    await waitFor(first, (s) => s.matches('waiting_for_approval') && log.includes('approval:apr:r1:c1'));
    const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    expect(log).not.toContain('exec:send_message:call:r1:c1');

    const restored = createActor(machine, { snapshot: persisted, input: input() }).start();
    expect(restored.getSnapshot().value).toBe('waiting_for_approval');
    restored.send({ type: 'APPROVAL_DECIDED', approvalId: 'apr:other', decision: 'approved', user: 'u' });
    expect(restored.getSnapshot().value).toBe('waiting_for_approval');
    restored.send({ type: 'APPROVAL_DECIDED', approvalId: 'apr:r1:c1', decision: 'approved', user: 'u' });
    expect(await toPromise(restored)).toEqual({ status: 'completed', reason: 'final_answer', text: 'sent' });
    expect(log.filter((l) => l.startsWith('exec:'))).toEqual(['exec:send_message:call:r1:c1']);
    model.assertConsumed('a', 'r1');
  });

  it('ends denied when the human denies or the approval expires, and never executes', async () => {
    for (const outcome of ['denied', 'expired'] as const) {
      const log: string[] = [];
      const { machine } = wired(
        [{ respond: { kind: 'calls', calls: [call('c1', 'send_message')] } }],
        { send_message: decision('approval-required', 'mode_ask') },
        log,
      );
      const actor = createActor(machine, { input: input() }).start();
      await waitFor(actor, (s) => s.matches('waiting_for_approval'));
      actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'apr:r1:c1', decision: outcome, user: null });
      expect(await toPromise(actor)).toEqual({ status: 'denied', reason: `approval_${outcome}` });
      expect(log.some((l) => l.startsWith('exec:'))).toBe(false);
    }
  });

  it('goes back to the model with a denial that carries the human reason, and never executes', async () => {
    const log: string[] = [];
    const { machine, model } = wired(
      [
        { respond: { kind: 'calls', calls: [call('c1', 'send_message')] } },
        {
          expect: {
            kind: 'tool.denied',
            reason: 'approval_denied',
            contains: 'a human denied this call: not #general',
          },
          respond: { kind: 'final', text: 'understood' },
        },
      ],
      { send_message: decision('approval-required', 'mode_ask') },
      log,
    );
    const actor = createActor(machine, { input: input() }).start();
    await waitFor(actor, (s) => s.matches('waiting_for_approval'));
    actor.send({
      type: 'APPROVAL_DECIDED',
      approvalId: 'apr:r1:c1',
      decision: 'denied',
      user: 'u',
      reason: 'not #general',
    });
    expect(await toPromise(actor)).toEqual({
      status: 'completed',
      reason: 'final_answer',
      text: 'understood',
    });
    expect(log.some((l) => l.startsWith('exec:'))).toBe(false);
    expect(actor.getSnapshot().context.used.toolCalls).toBe(1);
    model.assertConsumed('a', 'r1');
  });

  it('ends denied when the reason is empty or another approval is denied with a reason', async () => {
    const { machine } = wired(
      [{ respond: { kind: 'calls', calls: [call('c1', 'send_message')] } }],
      { send_message: decision('approval-required', 'mode_ask') },
      [],
    );
    const actor = createActor(machine, { input: input() }).start();
    await waitFor(actor, (s) => s.matches('waiting_for_approval'));
    actor.send({
      type: 'APPROVAL_DECIDED',
      approvalId: 'apr:other',
      decision: 'denied',
      user: 'u',
      reason: 'x',
    });
    expect(actor.getSnapshot().value).toBe('waiting_for_approval');
    actor.send({
      type: 'APPROVAL_DECIDED',
      approvalId: 'apr:r1:c1',
      decision: 'denied',
      user: 'u',
      reason: '',
    });
    expect(await toPromise(actor)).toEqual({ status: 'denied', reason: 'approval_denied' });
  });

  it('fails on a wall-time deadline sent by the runtime', async () => {
    const { machine } = wired(
      [{ respond: { kind: 'calls', calls: [call('c1', 'send_message')] } }],
      { send_message: decision('approval-required', 'mode_ask') },
      [],
    );
    const actor = createActor(machine, { input: input() }).start();
    await waitFor(actor, (s) => s.matches('waiting_for_approval'));
    actor.send({ type: 'DEADLINE' });
    expect(await toPromise(actor)).toEqual({
      status: 'failed',
      reason: 'budget_wall_time',
      message: 'the run passed its wall-time budget (60000 ms)',
    });
  });
});
