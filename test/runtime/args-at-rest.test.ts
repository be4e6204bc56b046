import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { databaseFiles, storedBytes } from '../support/stored-bytes.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  fx = null;
});

const budget = { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 };

function writeThen(content: string, next: ScriptedStep): ScriptedStep[] {
  return [
    {
      respond: {
        kind: 'calls',
        calls: [{ id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content } }],
      },
    },
    next,
  ];
}

/** Parks an unattended task on its approval, restarts the runtime (a new one on the same state dir), and approves. */
async function parkRestartApprove(
  f: RuntimeFixture,
  model: ScriptedModel,
): Promise<{ runId: string; runtime: Runtime }> {
  let runtime = await f.start(model);
  rt = runtime;
  const runId = await runtime.runs.runTask('worker', 'notes', 'take notes');
  const pending = await eventually(
    () => (rt && runtimeInternals(rt))?.store.approvals.listPending({ taskId: 'notes' })[0],
    20_000,
    'the Inbox record',
  );
  await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 20_000, 'the run to park');
  await runtime.stop();
  rt = null;
  runtime = await f.start(model);
  rt = runtime;
  expect(runtimeInternals(runtime).runs.isLive(runId)).toBe(false);
  expect(runtime.decide(pending.id, 'approved', 'alice').ok).toBe(true);
  return { runId, runtime };
}

function callKinds(runtime: Runtime, runId: string, callId: string): string[] {
  return runtimeInternals(runtime)
    .store.audit.list({ runId })
    .filter((e) => e.callId === callId)
    .map((e) => e.kind);
}

describe('a call whose arguments were redacted at rest, after a restart', () => {
  it('write_file with password=… parked, restarted, approved: nothing is written, the model is told and goes on', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask', tools: ['write_file'], budget } } });
    const model = new ScriptedModel({
      worker: writeThen('password=hunter2hunter2\n', {
        expect: {
          kind: 'tool.interrupted',
          tool: 'write_file',
          contains: 'held redacted values and were not kept across the restart',
        },
        respond: { kind: 'final', text: 'will ask again' },
      }),
    });
    const { runId, runtime } = await parkRestartApprove(fx, model);
    expect(await runtime.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'will ask again' });
    model.assertConsumed('worker', runId);
    // Not written with `password=[REDACTED]`, nor at all.
    expect(existsSync(join(fx.project, 'notes.txt'))).toBe(false);
    expect(runtimeInternals(runtime).store.ledger.lookup(`call:${runId}:c1`)).toBeNull();
    expect(callKinds(runtime, runId, 'c1')).toEqual([
      'proposed',
      'policy_decided',
      'approval_requested',
      'approval_resolved',
      'interrupted',
    ]);
    const refused = runtimeInternals(runtime)
      .store.audit.list({ runId })
      .find((e) => e.kind === 'interrupted');
    expect(refused).toMatchObject({ tool: 'write_file', risk: 'write-local', status: 'interrupted' });
    expect(refused?.detail).toMatchObject({ cause: 'arguments_redacted_at_rest' });
    expect(runtimeInternals(runtime).store.audit.verifyChain()).toMatchObject({ ok: true });
    await runtime.stop();
    rt = null;
    expect(storedBytes(...databaseFiles(fx.stateDir)).includes(Buffer.from('hunter2hunter2'))).toBe(false);
    expect(fx.logs.join('')).not.toContain('hunter2hunter2');
  }, 90_000);

  it('the same process: parked, approved, brought back from its redacted snapshot, written exactly as the model wrote it', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask', tools: ['write_file'], budget } } });
    const model = new ScriptedModel({
      worker: writeThen('password=hunter2hunter2\n', {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: { kind: 'final', text: 'written' },
      }),
    });
    const runtime = await fx.start(model);
    rt = runtime;
    const runId = await runtime.runs.runTask('worker', 'notes', 'take notes');
    const pending = await eventually(
      () => runtimeInternals(runtime).store.approvals.listPending({ taskId: 'notes' })[0],
      20_000,
      'the Inbox record',
    );
    await eventually(() => !runtimeInternals(runtime).runs.isLive(runId), 20_000, 'the run to park');
    // Parked: what the store holds of the call is redacted.
    expect(JSON.stringify(runtimeInternals(runtime).store.snapshots.get(runId))).not.toContain(
      'hunter2hunter2',
    );
    expect(runtime.decide(pending.id, 'approved', 'alice').ok).toBe(true);
    expect(await runtime.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'written' });
    model.assertConsumed('worker', runId);
    expect(readFileSync(join(fx.project, 'notes.txt'), 'utf8')).toBe('password=hunter2hunter2\n');
    expect(callKinds(runtime, runId, 'c1')).toEqual([
      'proposed',
      'policy_decided',
      'approval_requested',
      'approval_resolved',
      'started',
      'completed',
    ]);
    await runtime.stop();
    rt = null;
    expect(storedBytes(...databaseFiles(fx.stateDir)).includes(Buffer.from('hunter2hunter2'))).toBe(false);
  }, 90_000);

  it('benign: a call whose arguments were not altered runs exactly once after the restart and approval', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask', tools: ['write_file'], budget } } });
    const model = new ScriptedModel({
      worker: writeThen('plain notes\n', {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: { kind: 'final', text: 'written' },
      }),
    });
    const { runId, runtime } = await parkRestartApprove(fx, model);
    expect(await runtime.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'written' });
    expect(readFileSync(join(fx.project, 'notes.txt'), 'utf8')).toBe('plain notes\n');
    expect(runtimeInternals(runtime).store.ledger.lookup(`call:${runId}:c1`)).toMatchObject({
      status: 'completed',
      attempt: 1,
    });
    expect(callKinds(runtime, runId, 'c1').filter((k) => k === 'started')).toHaveLength(1);
    model.assertConsumed('worker', runId);
  }, 90_000);

  it('benign: the model’s own [REDACTED] text is kept across the restart and written as the model wrote it', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask', tools: ['write_file'], budget } } });
    const content = 'the log shows [REDACTED] where the key was\n';
    const model = new ScriptedModel({
      worker: writeThen(content, {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: { kind: 'final', text: 'written' },
      }),
    });
    const { runId, runtime } = await parkRestartApprove(fx, model);
    expect(await runtime.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'written' });
    expect(readFileSync(join(fx.project, 'notes.txt'), 'utf8')).toBe(content);
  }, 90_000);
});

describe('a live run executes the arguments the model wrote', () => {
  it('a secret-shaped argument and the literal [REDACTED] are both written as given (allow mode, no park)', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'allow', tools: ['write_file'], budget } } });
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [
              { id: 'c1', tool: 'write_file', args: { path: 'a.txt', content: 'password=hunter2hunter2\n' } },
              { id: 'c2', tool: 'write_file', args: { path: 'b.txt', content: 'masked: [REDACTED]\n' } },
            ],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'both' } },
      ],
    });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('worker', 'notes', 'take notes');
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'both' });
    expect(readFileSync(join(fx.project, 'a.txt'), 'utf8')).toBe('password=hunter2hunter2\n');
    expect(readFileSync(join(fx.project, 'b.txt'), 'utf8')).toBe('masked: [REDACTED]\n');
    expect(
      runtimeInternals(rt)
        .store.audit.list({ runId })
        .some((e) => e.kind === 'interrupted'),
    ).toBe(false);
  }, 60_000);
});
