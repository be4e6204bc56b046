// `snotra audit why` on a call decided on a real cluster (issue 37): a run parks for approval on
// node A, whose process is then SIGKILLed; the approval is decided through node B, which takes
// the run over and runs the call. B's log holds the decision, the take-over, the call's start
// and end; the proposal, the policy decision and the request were recorded on A. B's chain
// closes through the take-over and the approval record B brought in from the shared Inbox (its
// arguments hash equal to the one run), and names A as where the earlier links were recorded.
// A's own chain stays open (nothing there records the call running), and says so.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedStep } from '../../actors/model/scripted.ts';
import type { Provenance } from '../../runtime/index.ts';
import { auditWhyCommand } from '../../surfaces/cli/audit-why.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { startChildNode, type ChildNode } from './child-node.ts';
import { sharedOutbox } from './helpers.ts';

let cluster: NatsCluster;
let root: string;
const nodes: ChildNode[] = [];
beforeAll(async () => {
  cluster = await startNatsCluster();
  root = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-why-')));
}, 60_000);
afterAll(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
  await cluster?.stop();
  rmSync(root, { recursive: true, force: true });
});

const SCRIPT: ScriptedStep[] = [
  {
    respond: {
      kind: 'calls',
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'deploy' } }],
    },
  },
  { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'sent' } },
];

/** `snotra audit why RUN c1 --json` on a node's state dir, and its exit code. */
function why(id: string, runId: string): { code: number; out: Provenance } {
  let out = '';
  const io = { stdout: (s: string) => (out += s), stderr: (s: string) => (out += s) };
  const dir = join(root, id);
  const code = auditWhyCommand([runId, 'c1', '--json', '--state-dir', join(dir, 'state')], io, dir);
  return { code, out: JSON.parse(out) as Provenance };
}

describe('snotra audit why on a real cluster', () => {
  it('parked on A (then killed), approved through B, run on B: B’s chain closes and names A', async () => {
    const outbox = sharedOutbox();
    const start = async (id: string) => {
      const n = await startChildNode({ cluster, root, id, script: SCRIPT, mode: 'ask', outbox: outbox.file });
      nodes.push(n);
      return n;
    };
    const a = await start('node-wa');
    a.send({ cmd: 'task', task: 'deploy' });
    const approval = await a.waitFor((e) => e.event === 'approval', 'the approval on A');
    await a.waitFor((e) => e.event === 'run.parked', 'the run to park on A');
    const runId = String(approval.runId);
    await a.kill();
    const b = await start('node-wb');
    b.send({ cmd: 'decide', id: approval.id, user: 'alice' });
    expect(await b.waitFor((e) => e.event === 'decided', 'the decision through B')).toMatchObject({
      ok: true,
    });
    await b.waitFor((e) => e.event === 'run.completed' && e.runId === runId, 'the run to end on B', 90_000);
    expect(outbox.lines()).toEqual([`call:${runId}:c1 node-wb #ops`]);
    await b.stop();

    const onB = why('node-wb', runId);
    expect(onB.out.problems).toEqual([]);
    expect(onB.code).toBe(0);
    expect(onB.out).toMatchObject({ closed: true, tool: 'send_message', chain: { ok: true } });
    const steps = onB.out.steps;
    expect(steps.map((s) => s.step)).toEqual([
      'proposed',
      'decided',
      'taken_over',
      'approval_requested',
      'approval_resolved',
      'arguments',
      'started',
      'completed',
    ]);
    const by = Object.fromEntries(steps.map((s) => [s.step, s]));
    // Recorded on A: no seq in B's log, A named, the shared Inbox's record as the source.
    for (const s of ['proposed', 'decided'])
      expect(by[s]).toMatchObject({ seq: null, facts: expect.objectContaining({ recordedOn: 'node-wa' }) });
    expect(by.decided?.facts).toMatchObject({ decision: 'approval-required' });
    expect(by.taken_over).toMatchObject({ seq: expect.any(Number), facts: { from: 'node-wa' } });
    expect(by.approval_resolved?.facts).toMatchObject({
      decision: 'approved',
      decidedBy: 'alice',
      node: 'node-wb',
    });
    expect(by.arguments?.facts).toMatchObject({ equal: true });
    // The request as B brought it in from the shared Inbox, with the hash A recorded.
    expect(by.approval_requested).toMatchObject({
      seq: expect.any(Number),
      facts: { approvalId: approval.id, argsHash: by.arguments?.facts.ranHash },
    });
    const seqs = ['taken_over', 'approval_requested', 'approval_resolved', 'started', 'completed'].map(
      (s) => by[s]?.seq as number,
    );
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);

    // A recorded the proposal, the decision and the request; nothing there records the call
    // running, so its chain does not close, and says where it stops.
    const onA = why('node-wa', runId);
    expect(onA.code).toBe(1);
    expect(onA.out.closed).toBe(false);
    expect(onA.out.steps.map((s) => s.step).slice(0, 3)).toEqual([
      'proposed',
      'decided',
      'approval_requested',
    ]);
  }, 240_000);
});
