import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { ClusterDecisionError, decideAsLocalUser } from '../../runtime/control/inbox.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { CLUSTER_FILE } from '../../runtime/runtime-file.ts';
import { Runtime } from '../../runtime/runtime.ts';
import { eventually } from '../support/runtime.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { ASK_CONFIG, countingSend, NOTIFY, sharedOutbox, startNode, type TestNode } from './helpers.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let cluster: NatsCluster;
const nodes: TestNode[] = [];
beforeAll(async () => {
  cluster = await startNatsCluster();
}, 60_000);
afterEach(async () => {
  for (const n of nodes.splice(0)) {
    await n.rt.stop().catch(() => {});
    n.fx.cleanup();
  }
});
afterAll(async () => {
  await cluster?.stop();
});

describe('two runtime nodes on a three-server cluster', () => {
  it('a run parked by node A is approved through node B and resumes once', async () => {
    const outbox = sharedOutbox();
    const model = new ScriptedModel({ worker: NOTIFY });
    const a = await startNode(cluster, 'node-a', model, outbox.file);
    nodes.push(a);
    const runId = await a.rt.runs.runTask('worker', 'nightly', 'tell #ops');
    const pending = await eventually(
      () => runtimeInternals(a.rt).store.approvals.listPending()[0],
      15_000,
      'the Inbox record on A',
    );
    await eventually(() => !runtimeInternals(a.rt).runs.isLive(runId), 10_000, 'the run to park on A');
    const b = await startNode(cluster, 'node-b', model, outbox.file);
    nodes.push(b);
    // The shared Inbox has it (published by A) before B decides.
    await eventually(
      async () => (await runtimeInternals(b.rt).cluster?.inbox.get(pending.id)) ?? null,
      10_000,
      'the shared Inbox record',
    );
    // The synchronous forms would write one node's store alone: refused, naming the node, and
    // nothing is decided.
    expect(() => b.rt.decide(pending.id, 'approved', 'mallory')).toThrow(ClusterDecisionError);
    expect(() => b.rt.decide(pending.id, 'approved', 'mallory')).toThrow(
      /cluster node "node-b".*decideAsync/,
    );
    expect(() => a.rt.approvals.approveWithGrant(pending.id, 'session', 'mallory')).toThrow(
      /session and standing/,
    );
    expect(runtimeInternals(a.rt).store.approvals.get(pending.id)?.status).toBe('pending');
    expect((await runtimeInternals(b.rt).cluster?.inbox.get(pending.id))?.value.status).toBe('pending');
    const decided = await runtimeInternals(b.rt).cluster?.decide(pending.id, 'approved', 'alice');
    expect(decided).toMatchObject({ ok: true, approval: { status: 'approved', decidedBy: 'alice' } });
    // A second decision, through the other node, changes nothing and says so.
    const again = await runtimeInternals(a.rt).cluster?.decide(pending.id, 'denied', 'mallory');
    expect(again).toMatchObject({ ok: false, reason: 'already_decided' });
    expect(again?.ok === false ? again.message : '').toContain('node-b');

    // The run ends once, on whichever node took its resume item.
    const ended = await eventually(
      () => {
        for (const n of [a, b]) {
          const s = runtimeInternals(n.rt).store.snapshots.get(runId);
          if (s?.status === 'completed') return n.id;
        }
        return null;
      },
      20_000,
      'the run to complete on a node',
    );
    // The shared record follows the node's own store (mirrored after the local write).
    const record = await eventually(
      async () => {
        const r = await runtimeInternals(a.rt).cluster?.records.get(runId);
        return r?.value.status === 'completed' ? r : null;
      },
      20_000,
      'the shared run record to say completed',
    );
    expect(record?.value).toMatchObject({ status: 'completed', owner: ended });
    expect(outbox.lines()).toEqual([`call:${runId}:c1 ${ended} #ops`]);
    // The node that resumed it has the decision in its own store; the claim holds the outcome.
    const resumedOn = ended === 'node-a' ? a : b;
    expect(runtimeInternals(resumedOn.rt).store.approvals.get(pending.id)).toMatchObject({
      status: 'approved',
      decidedBy: 'alice',
    });
    expect(await runtimeInternals(a.rt).cluster?.claims.get(`call:${runId}:c1`)).toMatchObject({
      status: 'completed',
      node: ended,
    });
    // Each node's own audit chain verifies.
    for (const n of [a, b])
      expect(runtimeInternals(n.rt).store.audit.verifyChain()).toMatchObject({ ok: true });
    // The node that ended the run keeps nothing of it in memory once its record is written.
    await eventually(
      () => runtimeInternals(resumedOn.rt).cluster?.stats().trackedRuns === 0,
      10_000,
      'the ended run to leave the node’s memory',
    );
    expect(runtimeInternals(resumedOn.rt).cluster?.stats()).toMatchObject({
      trackedRuns: 0,
      openedApprovals: 0,
    });
  }, 90_000);

  it('decisions through the runtime API (the sidecar path) on two nodes at once: exactly one is told ok', async () => {
    const outbox = sharedOutbox();
    const model = new ScriptedModel({ worker: NOTIFY });
    const a = await startNode(cluster, 'node-a', model, outbox.file);
    nodes.push(a);
    const b = await startNode(cluster, 'node-b', model, outbox.file);
    nodes.push(b);
    const runId = await a.rt.runs.runTask('worker', 'nightly', 'tell #ops');
    const pending = await eventually(
      () => runtimeInternals(a.rt).store.approvals.listPending()[0],
      15_000,
      'the Inbox record on A',
    );
    await eventually(
      async () => (await runtimeInternals(b.rt).cluster?.inbox.get(pending.id)) ?? null,
      10_000,
      'the shared Inbox record',
    );
    const [viaA, viaB] = await Promise.all([
      a.rt.approvals.decideAsync(pending.id, 'approved', 'alice'),
      b.rt.approvals.decideAsync(pending.id, 'approved', 'bob'),
    ]);
    expect([viaA.ok, viaB.ok].filter(Boolean), JSON.stringify([viaA, viaB])).toHaveLength(1);
    expect(viaA.ok ? viaB : viaA).toMatchObject({ ok: false, reason: 'already_decided' });
    const winner = viaA.ok ? 'alice' : 'bob';
    const ended = await eventually(
      () => {
        for (const n of [a, b])
          if (runtimeInternals(n.rt).store.snapshots.get(runId)?.status === 'completed') return n;
        return null;
      },
      20_000,
      'the run to complete on a node',
    );
    // The decision that ran is the one its caller was told won; the call ran once.
    expect(runtimeInternals(ended.rt).store.approvals.get(pending.id)).toMatchObject({
      status: 'approved',
      decidedBy: winner,
    });
    expect(outbox.lines()).toHaveLength(1);
  }, 90_000);

  it('the CLI refuses to decide in a cluster node’s state dir (its local store is not the shared Inbox)', async () => {
    const outbox = sharedOutbox();
    const model = new ScriptedModel({ worker: NOTIFY });
    const a = await startNode(cluster, 'node-a', model, outbox.file);
    nodes.push(a);
    await a.rt.runs.runTask('worker', 'nightly', 'tell #ops');
    const pending = await eventually(
      () => runtimeInternals(a.rt).store.approvals.listPending()[0],
      15_000,
      'the Inbox record on A',
    );
    const stateDir = runtimeInternals(a.rt).loaded.config.stateDir;
    await expect(decideAsLocalUser(stateDir, pending.id, 'approved')).rejects.toThrow(
      /cluster node node-a: decide through a node's sidecar/,
    );
    await expect(decideAsLocalUser(stateDir, pending.id, 'approved')).rejects.toBeInstanceOf(
      ClusterDecisionError,
    );
    // Nothing was decided anywhere.
    expect(runtimeInternals(a.rt).store.approvals.get(pending.id)?.status).toBe('pending');
    // The shared Inbox has the request (published after the local write) and it is still pending.
    const shared = await eventually(
      async () => (await runtimeInternals(a.rt).cluster?.inbox.get(pending.id)) ?? null,
      10_000,
      'the shared Inbox record',
    );
    expect(shared.value).toMatchObject({ status: 'pending' });
    expect(outbox.lines()).toEqual([]);
    expect(existsSync(join(stateDir, CLUSTER_FILE))).toBe(true);
  }, 90_000);

  it('a stale cluster marker is removed when the same state dir boots single-node: the CLI decides there again', async () => {
    const outbox = sharedOutbox();
    const a = await startNode(cluster, 'node-m', new ScriptedModel({ worker: [] }), outbox.file);
    nodes.push(a);
    const stateDir = runtimeInternals(a.rt).loaded.config.stateDir;
    expect(JSON.parse(readFileSync(join(stateDir, CLUSTER_FILE), 'utf8'))).toEqual({ nodeId: 'node-m' });
    await a.rt.stop();
    // Left by the cluster run (a stop does not remove it, and a killed node could not).
    expect(existsSync(join(stateDir, CLUSTER_FILE))).toBe(true);
    await expect(decideAsLocalUser(stateDir, 'apr:none', 'approved')).rejects.toBeInstanceOf(
      ClusterDecisionError,
    );
    // The same dir and state, with no bus.url and no node.id: an embedded single node.
    const single = parseConfig(
      JSON.stringify({
        stateDir: 'state',
        workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
        ...ASK_CONFIG,
      }),
      join(a.fx.dir, 'snotra.config.json'),
      a.fx.dir,
    );
    expect(single.config.stateDir).toBe(stateDir);
    const boot = () =>
      Runtime.start({
        loaded: single,
        model: new ScriptedModel({ worker: NOTIFY }),
        executorOverrides: { send_message: countingSend(outbox.file, 'single') },
        logDestination: new Writable({ write: (_c, _e, cb) => cb() }),
        syncIntervalMs: 100,
      });
    let rt = await boot();
    let runId: string;
    let approvalId: string;
    try {
      expect(runtimeInternals(rt).cluster).toBeNull();
      expect(existsSync(join(stateDir, CLUSTER_FILE))).toBe(false);
      runId = await rt.runs.runTask('worker', 'nightly', 'tell #ops');
      approvalId = (
        await eventually(() => runtimeInternals(rt).store.approvals.listPending()[0], 15_000, 'the approval')
      ).id;
      await eventually(() => !runtimeInternals(rt).runs.isLive(runId), 10_000, 'the run to park');
    } finally {
      await rt.stop();
    }
    // The CLI's local decision is taken again (it was refused while the marker was there), and
    // the next boot resumes the run on it.
    const { result } = await decideAsLocalUser(stateDir, approvalId, 'approved');
    expect(result.ok).toBe(true);
    rt = await boot();
    try {
      expect(existsSync(join(stateDir, CLUSTER_FILE))).toBe(false);
      await eventually(
        () => runtimeInternals(rt).store.snapshots.get(runId)?.status === 'completed',
        30_000,
        'the run to end',
      );
      expect(outbox.lines()).toEqual([`call:${runId}:c1 single #ops`]);
    } finally {
      await rt.stop();
    }
  }, 90_000);
});
