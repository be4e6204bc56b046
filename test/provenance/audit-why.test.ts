import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { Provenance } from '../../runtime/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditWhyCommand } from '../../surfaces/cli/audit-why.ts';
import { policyReplayCommand } from '../../surfaces/cli/policy-replay.ts';
import { startSidecar, type Sidecar } from '../../surfaces/sidecar/server.ts';
import { call } from '../sidecar/client.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

const TOKEN = 'P'.repeat(16) + 'abcdefghijklmnopqrstuvwxyz012345';
const auth = { Authorization: `Bearer ${TOKEN}` };

// One runtime and sidecar for the file; each case is an agent whose model proposes one send.
let fx: RuntimeFixture;
let rt: Runtime;
let sidecar: Sidecar;

const send = (channel: string): ScriptedStep[] => [
  { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'send_message', args: { channel, text: 'hi' } }] } },
  { respond: { kind: 'final', text: 'done' } },
];
const AGENTS = ['approved', 'denied', 'standing', 'clustered', 'edited'];
const model = new ScriptedModel(Object.fromEntries(AGENTS.map((a) => [a, send(`#${a}`)])));

beforeAll(async () => {
  const agent = { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 120_000 } };
  fx = runtimeFixture({ agents: Object.fromEntries(AGENTS.map((a) => [a, agent])) });
  rt = await fx.start(model);
  sidecar = await startSidecar({ runtime: rt, token: TOKEN, port: 0, allowedOrigins: [] });
}, 60_000);
afterAll(async () => {
  await sidecar?.close();
  await rt?.stop();
  fx?.cleanup();
});

/** Starts a run of `agent` on `task` and returns it with its pending approval. */
async function parked(agent: string, task: string) {
  const internals = runtimeInternals(rt);
  const runId = await rt.runs.runTask(agent, task, 'send it');
  const approval = await eventually(
    () => internals.store.approvals.listPending({ taskId: task })[0],
    20_000,
    `the approval of ${task}`,
  );
  return { runId, approval };
}

/** `snotra audit why RUN c1 --json` on the runtime's state dir (read-only), and its exit code. */
function why(runId: string): { code: number; out: Provenance; text: string } {
  let out = '';
  let text = '';
  const io = { stdout: (s: string) => (out += s), stderr: (s: string) => (out += s) };
  const code = auditWhyCommand([runId, 'c1', '--json', '--state-dir', fx.stateDir], io, fx.dir);
  auditWhyCommand(
    [runId, 'c1', '--state-dir', fx.stateDir],
    { stdout: (s) => (text += s), stderr: () => {} },
    fx.dir,
  );
  return { code, out: JSON.parse(out) as Provenance, text };
}

const stepsOf = (p: Provenance) => p.steps.map((s) => s.step);

describe('snotra audit why and GET /v1/runs/:runId/calls/:callId/provenance', () => {
  it('an approved call: decided by whom through which surface, args hash-equal, started, completed', async () => {
    const { runId, approval } = await parked('approved', 'approved');
    const decided = await call(sidecar.port, 'POST', `/v1/inbox/${approval.id}/decision`, {
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: '{"decision":"approve"}',
    });
    expect(decided.status).toBe(200);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    const { code, out, text } = why(runId);
    expect(code).toBe(0);
    expect(out.closed).toBe(true);
    expect(stepsOf(out)).toEqual([
      'proposed',
      'decided',
      'approval_requested',
      'approval_resolved',
      'arguments',
      'started',
      'completed',
    ]);
    const resolved = out.steps.find((s) => s.step === 'approval_resolved');
    expect(resolved?.facts).toMatchObject({ decision: 'approved', surface: 'sidecar', node: null });
    expect(String(resolved?.facts.decidedBy)).toMatch(/^sidecar:/);
    expect(out.steps.find((s) => s.step === 'arguments')?.facts).toMatchObject({ equal: true });
    const seqs = out.steps.flatMap((s) => (s.seq === null ? [] : [s.seq]));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(text).toMatch(/#\d+ +approval_resolved .*approved by sidecar:/);
    expect(text).toContain('the chain closes');

    const route = await call(
      sidecar.port,
      'GET',
      `/v1/runs/${encodeURIComponent(runId)}/calls/c1/provenance`,
      {
        headers: auth,
      },
    );
    expect(route.status).toBe(200);
    expect(route.json()).toEqual(out);
    const unknown = await call(
      sidecar.port,
      'GET',
      `/v1/runs/${encodeURIComponent(runId)}/calls/c9/provenance`,
      {
        headers: auth,
      },
    );
    expect(unknown.status).toBe(404);
    const unauthenticated = await call(
      sidecar.port,
      'GET',
      `/v1/runs/${encodeURIComponent(runId)}/calls/c1/provenance`,
    );
    expect(unauthenticated.status).toBe(401);
  });

  it('a denied call: the chain ends at the denial, closed, and nothing started', async () => {
    const { runId, approval } = await parked('denied', 'denied');
    expect(rt.decide(approval.id, 'denied', 'local:bob').ok).toBe(true);
    await rt.waitForRun(runId);
    const { code, out } = why(runId);
    expect(code).toBe(0);
    expect(stepsOf(out)).toEqual(['proposed', 'decided', 'approval_requested', 'approval_resolved']);
    expect(out.steps.at(-1)?.facts).toMatchObject({
      decision: 'denied',
      decidedBy: 'local:bob',
      surface: 'cli',
    });
  });

  it('a standing-approved call: the grant (with its own seq) instead of a request, then started and completed', async () => {
    const first = await parked('standing', 'nightly');
    expect(rt.approvals.approveWithGrant(first.approval.id, 'standing', 'local:alice').ok).toBe(true);
    await rt.waitForRun(first.runId);
    const runId = await rt.runs.runTask('standing', 'nightly', 'send it again');
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    const { code, out } = why(runId);
    expect(code).toBe(0);
    expect(stepsOf(out)).toEqual(['proposed', 'decided', 'standing_approval', 'started', 'completed']);
    expect(out.steps[1]?.facts).toMatchObject({ decision: 'allow', ruleSource: 'standing-approval' });
    expect(out.steps[2]?.facts).toMatchObject({ target: '#standing', grantedBy: 'local:alice' });
    expect(out.steps[2]?.seq).toBeLessThan(out.steps[0]?.seq ?? 0);
  });

  it('a cluster-decided call names the node the decision came through', async () => {
    const { runId, approval } = await parked('clustered', 'clustered');
    const internals = runtimeInternals(rt);
    // As a node that takes the decision from the shared Inbox records it (runtime/cluster/follower.ts).
    internals.store.approvals.decide(
      approval.id,
      'approved',
      'sidecar:carol',
      Date.now(),
      undefined,
      'node-b',
    );
    internals.approvals.sync(approval.id);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    const { code, out } = why(runId);
    expect(code).toBe(0);
    expect(out.steps.find((s) => s.step === 'approval_resolved')?.facts).toMatchObject({
      decidedBy: 'sidecar:carol',
      surface: 'sidecar',
      node: 'node-b',
    });
  });

  it('a chain that does not close says why and exits 1 (arguments changed after the approval)', async () => {
    const { runId, approval } = await parked('edited', 'edited');
    const internals = runtimeInternals(rt);
    await eventually(() => !internals.runs.isLive(runId), 20_000, 'the run to park');
    const stored = internals.store.snapshots.get(runId);
    if (stored === null) throw new Error('no snapshot');
    const snapshot = structuredClone(stored.snapshot) as { context: { calls: Array<{ args: object }> } };
    (snapshot.context.calls[0] as { args: object }).args = { channel: '#elsewhere', text: 'hi' };
    internals.store.snapshots.put({
      runId,
      agentId: stored.agentId,
      surface: stored.surface,
      status: stored.status,
      parentRunId: stored.parentRunId,
      snapshot,
    });
    expect(rt.decide(approval.id, 'approved', 'local:alice').ok).toBe(true);
    await rt.waitForRun(runId);
    const { code, out, text } = why(runId);
    expect(code).toBe(1);
    expect(out.closed).toBe(false);
    expect(stepsOf(out)).toContain('call_refused');
    expect(out.problems.join(' ')).toContain('approval_args_mismatch');
    expect(text).toContain('NOT CLOSED');
  });

  it('an unknown call is exit 1 with its own error code', () => {
    let out = '';
    const io = { stdout: (s: string) => (out += s), stderr: (s: string) => (out += s) };
    expect(auditWhyCommand(['no-such-run', 'c1', '--json', '--state-dir', fx.stateDir], io, fx.dir)).toBe(1);
    expect(JSON.parse(out)).toMatchObject({ error: { code: 'unknown_call' } });
    expect(auditWhyCommand(['only-a-run', '--state-dir', fx.stateDir], io, fx.dir)).toBe(2);
  });

  it('policy replay of this audit: a looser config exits 3 listing the calls it loosens, a stricter one exits 0', async () => {
    const proposed = (mode: string, rules: unknown[] = []) => {
      const file = join(fx.dir, `proposed-${mode}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          stateDir: 'state',
          workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
          agents: Object.fromEntries(AGENTS.map((a) => [a, { mode, rules }])),
        }),
      );
      return file;
    };
    let out = '';
    const io = {
      stdout: (s: string) => void (out += s),
      stderr: (s: string) => void (out += s),
      stdinLines: async function* () {},
    };
    expect(await policyReplayCommand(['--config', proposed('allow'), '--json'], io, fx.dir)).toBe(3);
    const looser = JSON.parse(out) as {
      replayed: number;
      looser: number;
      groups: Record<string, Array<{ runId: string; callId: string; agentId: string; looser: boolean }>>;
    };
    const loosened = looser.groups['approval-required→allow'] ?? [];
    expect(loosened.length).toBeGreaterThanOrEqual(AGENTS.length);
    expect(new Set(loosened.map((c) => c.agentId))).toEqual(new Set(AGENTS));
    expect(loosened.every((c) => c.looser && c.callId === 'c1')).toBe(true);
    expect(looser.looser).toBe(loosened.length);

    out = '';
    const stricter = proposed('deny', [{ id: 'never-used', target: '#nowhere', effect: 'deny' }]);
    expect(await policyReplayCommand(['--config', stricter], io, fx.dir)).toBe(0);
    expect(out).toContain('approval-required→deny');
    expect(out).toContain('allow→deny');
    expect(out).toContain('agent approved: never-used');
    expect(out).toContain('nothing gets looser');

    out = '';
    expect(
      await policyReplayCommand(
        ['--config', stricter, '--agent', 'denied', '--since', '1d', '--json'],
        io,
        fx.dir,
      ),
    ).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ replayed: 1, looser: 0 });
  });
});
