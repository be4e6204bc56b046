// The audit chains of a take-over tell the truth (issue 34), on a real three-server JetStream
// cluster with runtime nodes in child processes: a run parked on node A is approved through node
// C; the node that took its resume item is SIGKILLed mid-call and the other one takes the run
// over. Every chain involved records the real decision (who, through which node); the node that
// took the run over records the take-over and the call as made elsewhere, never as a call it
// started or had interrupted; the node that made the call has its `started`. The call ran once.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedStep } from '../../actors/model/scripted.ts';
import { openLocalStore } from '../../runtime/control/local-store.ts';
import type { AuditEvent } from '../../store/index.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { startChildNode, type ChildNode } from './child-node.ts';
import { sharedOutbox } from './helpers.ts';

let cluster: NatsCluster;
let root: string;
const nodes: ChildNode[] = [];
beforeAll(async () => {
  cluster = await startNatsCluster();
  root = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-takeover-')));
}, 60_000);
afterAll(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
  await cluster?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Asks for one send, then reports whatever came back about it (the call was cut on a dead node). */
const SCRIPT: ScriptedStep[] = [
  {
    respond: {
      kind: 'calls',
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'deploy' } }],
    },
  },
  {
    expect: { kind: 'tool.interrupted', tool: 'send_message' },
    respond: { kind: 'final', text: 'reported the interruption' },
  },
];

/** A node's audit events of one run, read from its state dir once it is stopped or killed. */
function chainOf(id: string, runId: string): { events: AuditEvent[]; ok: boolean } {
  const store = openLocalStore(join(root, id, 'state'), true);
  try {
    return { events: store.audit.list({ runId }), ok: store.audit.verifyChain().ok };
  } finally {
    store.close();
  }
}

const detail = (e: AuditEvent): Record<string, unknown> => (e.detail ?? {}) as Record<string, unknown>;

describe('a take-over is audited as what happened', () => {
  it('approved through C, the node running the call killed: every chain holds the real decision', async () => {
    const outbox = sharedOutbox();
    const hang = join(root, 'hang');
    writeFileSync(hang, '');
    const start = async (id: string) => {
      const n = await startChildNode({
        cluster,
        root,
        id,
        script: SCRIPT,
        mode: 'ask',
        outbox: outbox.file,
        hangFile: hang,
      });
      nodes.push(n);
      return n;
    };
    const a = await start('node-ta');
    a.send({ cmd: 'task', task: 'deploy' });
    const approval = await a.waitFor((e) => e.event === 'approval', 'the approval on A');
    await a.waitFor((e) => e.event === 'run.parked', 'the run to park on A');
    const runId = String(approval.runId);
    const c = await start('node-tc');
    c.send({ cmd: 'decide', id: approval.id, user: 'alice' });
    expect(await c.waitFor((e) => e.event === 'decided', 'the decision through C')).toMatchObject({
      ok: true,
    });
    // Whichever node took the resume item runs the approved call, which hangs there: kill it.
    const [maker, taker] = await Promise.race([
      a.waitFor((e) => e.event === 'called', 'the call on A', 60_000).then(() => [a, c] as const),
      c.waitFor((e) => e.event === 'called', 'the call on C', 60_000).then(() => [c, a] as const),
    ]);
    await maker.kill();
    const done = await taker.waitFor(
      (e) => (e.event === 'run.completed' || e.event === 'run.failed') && e.runId === runId,
      'the run to end on the other node',
      90_000,
    );
    expect(done.event).toBe('run.completed');
    expect(taker.events.some((e) => e.event === 'called')).toBe(false);
    expect(outbox.lines()).toEqual([`call:${runId}:c1 ${maker.id} #ops`]);
    await taker.stop();

    const chains = { maker: chainOf(maker.id, runId), taker: chainOf(taker.id, runId) };
    const parked = chainOf('node-ta', runId);
    const through = chainOf('node-tc', runId);
    for (const chain of [chains.maker, chains.taker]) expect(chain.ok).toBe(true);

    // The decision, as it was made, in the chain of the node that parked it and of the node it
    // was made through — never an expiry, never a withdrawal.
    for (const chain of [parked, through]) {
      const resolved = chain.events.filter((e) => e.kind === 'approval_resolved');
      expect(resolved.map(detail)).toContainEqual(
        expect.objectContaining({ decidedBy: 'alice', through: 'node-tc' }),
      );
      expect(resolved.filter((e) => e.status === 'expired' || 'withdrawn' in detail(e))).toEqual([]);
    }

    // The node that took the run over: the take-over, and the call as made on the dead node.
    const t = chains.taker.events;
    // Taken by the failover check, or by the decision's resume item given back when its holder died.
    expect(t.filter((e) => e.kind === 'run_taken_over').map(detail)).toContainEqual(
      expect.objectContaining({ from: maker.id, why: expect.stringMatching(/^(failover|decision)$/) }),
    );
    expect(t.filter((e) => e.kind === 'call_elsewhere')).toEqual([
      expect.objectContaining({
        status: 'interrupted',
        tool: 'send_message',
        detail: expect.objectContaining({ node: maker.id }),
      }),
    ]);
    expect(t.filter((e) => e.kind === 'started' || e.kind === 'interrupted')).toEqual([]);

    // The node that made the call: its `started` (it ran it and died before it finished).
    expect(chains.maker.events.filter((e) => e.kind === 'started')).toHaveLength(1);
  }, 240_000);
});
