import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

// One runtime for the file: each case is its own task and run, parked for approval, its stored
// snapshot edited (or not) while it waits, then approved.
let fx: RuntimeFixture;
let rt: Runtime;

type Args = Record<string, unknown>;

/** Each case is one agent whose model proposes one send with these arguments, then answers. */
const CASES: Record<string, Args> = {
  edited: { channel: '#ops', text: 'deploy 1.2' },
  nfd: { channel: '#caf\u00e9', text: 'hello' },
  reordered: { channel: '#ops', text: 'all green' },
};
const script = (args: Args): ScriptedStep[] => [
  { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'send_message', args }] } },
  { respond: { kind: 'final', text: 'done' } },
];
const model = new ScriptedModel(Object.fromEntries(Object.entries(CASES).map(([k, a]) => [k, script(a)])));
const agent = { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 120_000 } };

beforeAll(async () => {
  fx = runtimeFixture({ agents: Object.fromEntries(Object.keys(CASES).map((k) => [k, agent])) });
  rt = await fx.start(model);
}, 60_000);
afterAll(async () => {
  await rt?.stop();
  fx?.cleanup();
});

/** Parks the send of case `task`, rewrites the stored call's args with `edit`, approves, and returns the run's end. */
async function parkEditApprove(task: string, edit: (stored: Args) => Args) {
  const internals = runtimeInternals(rt);
  const runId = await rt.runs.runTask(task, task, `send for ${task}`);
  const pending = await eventually(
    () => internals.store.approvals.listPending({ taskId: task })[0],
    20_000,
    `the approval of ${task}`,
  );
  await eventually(() => !internals.runs.isLive(runId), 20_000, `${task} to park`);
  const stored = internals.store.snapshots.get(runId);
  if (stored === null) throw new Error(`no snapshot of ${runId}`);
  const snapshot = structuredClone(stored.snapshot) as { context: { calls: Array<{ args: Args }> } };
  const call = snapshot.context.calls[0];
  if (call === undefined) throw new Error('the parked run holds no call');
  call.args = edit(call.args);
  internals.store.snapshots.put({
    runId,
    agentId: stored.agentId,
    surface: stored.surface,
    status: stored.status,
    parentRunId: stored.parentRunId,
    snapshot,
  });
  expect(rt.decide(pending.id, 'approved', 'local:alice').ok).toBe(true);
  const outcome = await rt.waitForRun(runId);
  const events = internals.store.audit.list({ runId }).filter((e) => e.callId === 'c1');
  return { runId, outcome, events, transcript: internals.store.snapshots.get(runId)?.snapshot };
}

describe('an approval binds the exact arguments it was given for', () => {
  it(
    'a parked run whose stored arguments were changed after the approval is refused, and nothing runs',
    { timeout: 60_000 },
    async () => {
      const r = await parkEditApprove('edited', (a) => ({
        ...a,
        text: 'deploy 6.6; rm -rf prod',
      }));
      expect(fx.sent().filter((s) => s.includes('rm -rf'))).toEqual([]);
      expect(fx.sent().filter((s) => s.includes('deploy'))).toEqual([]);
      expect(r.events.map((e) => e.kind)).toEqual([
        'proposed',
        'policy_decided',
        'approval_requested',
        'approval_resolved',
        'call_refused',
      ]);
      const refused = r.events.find((e) => e.kind === 'call_refused');
      expect(refused?.status).toBe('approval_args_mismatch');
      const requested = r.events.find((e) => e.kind === 'approval_requested');
      expect((refused?.detail as { approvedHash: string }).approvedHash).toBe(
        (requested?.detail as { argsHash: string }).argsHash,
      );
      expect(JSON.stringify(r.transcript)).toContain('"reason":"approval_args_mismatch"');
      expect(runtimeInternals(rt).store.ledger.lookup(`call:${r.runId}:c1`)).toBeNull();
    },
  );

  it(
    'a look-alike edit (the same text in another Unicode normalization) is refused too',
    { timeout: 60_000 },
    async () => {
      const r = await parkEditApprove('nfd', (a) => ({
        ...a,
        channel: '#cafe\u0301',
      }));
      expect(fx.sent().filter((s) => s.includes('#caf'))).toEqual([]);
      expect(r.events.map((e) => e.kind)).toContain('call_refused');
      expect(r.events.map((e) => e.kind)).not.toContain('started');
    },
  );

  it(
    'benign: the same arguments with their keys in another order run as approved, once',
    { timeout: 60_000 },
    async () => {
      const r = await parkEditApprove('reordered', (a) => ({
        text: a.text,
        channel: a.channel,
      }));
      expect(r.outcome).toMatchObject({ status: 'completed' });
      expect(fx.sent()).toContain('#ops all green');
      expect(r.events.map((e) => e.kind)).toEqual([
        'proposed',
        'policy_decided',
        'approval_requested',
        'approval_resolved',
        'started',
        'completed',
      ]);
      const started = r.events.find((e) => e.kind === 'started');
      const requested = r.events.find((e) => e.kind === 'approval_requested');
      expect((started?.detail as { argsHash: string }).argsHash).toBe(
        (requested?.detail as { argsHash: string }).argsHash,
      );
    },
  );
});
