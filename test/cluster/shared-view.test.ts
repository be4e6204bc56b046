// Every node's view follows the shared record (issue 34), on a real three-server JetStream
// cluster with three runtime nodes: the node that parked approvals learns the decisions made
// through the others (its Inbox, runs list and feed, also after a restart), every node lists the
// cluster's pending approvals with the node that parked them, a second live node with the same
// id is refused at once, `bus.url` may be a list whose first server is down, and a rewind on a
// node is refused (`rewind_in_cluster`, issue 38: other nodes' live runs are not visible). One cluster and
// one set of nodes for the whole file: the cases run in order and build on each other.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { Checkpointer } from '../../runtime/checkpoints/index.ts';
import { listPending } from '../../runtime/control/inbox.ts';
import type { RunFeedEvent } from '../../runtime/events.ts';
import { MemorySecretStore } from '../../runtime/secrets/memory.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { startSidecar, type Sidecar } from '../../surfaces/sidecar/server.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { eventually, runtimeFixture } from '../support/runtime.ts';
import { ASK_CONFIG, countingSend, NOTIFY, sharedOutbox, startNode, type TestNode } from './helpers.ts';

let cluster: NatsCluster;
const outbox = sharedOutbox();
const model = new ScriptedModel({ worker: NOTIFY });
const feeds = new Map<string, RunFeedEvent[]>();
let a: TestNode;
let b: TestNode;
let c: TestNode;
const runIds: string[] = [];
let sidecarB: Sidecar;
const token = randomBytes(32).toString('hex');

/** A request to B's sidecar (the local API the web app and other clients use). */
async function api(path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${sidecarB.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}
const approvalIds: string[] = [];

async function node(id: string): Promise<TestNode> {
  const feed: RunFeedEvent[] = feeds.get(id) ?? [];
  feeds.set(id, feed);
  return startNode(cluster, id, model, outbox.file, ASK_CONFIG, {}, { onRunEvent: (e) => feed.push(e) });
}

const store = (n: TestNode) => runtimeInternals(n.rt).store;

beforeAll(async () => {
  cluster = await startNatsCluster();
  // A alone first, so the runs park on A (new runs go to whichever node's consumer asks first).
  a = await node('node-a');
  for (const task of ['t1', 't2', 't3', 't4'])
    runIds.push(await a.rt.runs.runTask('worker', task, 'tell #ops'));
  const pending = await eventually(
    () => {
      const p = store(a).approvals.listPending();
      return p.length === 4 && runIds.every((r) => !runtimeInternals(a.rt).runs.isLive(r)) ? p : null;
    },
    30_000,
    'four runs parked on A',
  );
  approvalIds.push(...pending.map((p) => p.id));
  b = await node('node-b');
  c = await node('node-c');
  sidecarB = await startSidecar({ runtime: b.rt, token, port: 0, allowedOrigins: [] });
}, 180_000);

afterAll(async () => {
  await sidecarB?.close();
  for (const n of [a, b, c]) {
    await n?.rt.stop().catch(() => {});
    n?.fx.cleanup();
  }
  await cluster?.stop();
});

describe('the cluster-wide Inbox', () => {
  it('every node lists every pending approval of the cluster, with the node that parked it', async () => {
    for (const n of [a, b, c]) {
      const listed = await eventually(
        () => {
          const l = n.rt.read.pendingApprovals();
          return l.length === 4 ? l : null;
        },
        20_000,
        `the cluster's four approvals on ${n.id}`,
      );
      expect(listed.map((x) => x.id).sort()).toEqual([...approvalIds].sort());
      expect(listed.every((x) => x.node === 'node-a')).toBe(true);
      // The web app opens one by id: the record is there on every node.
      expect(n.rt.read.approval(approvalIds[0] as string)?.approval.id).toBe(approvalIds[0]);
      // `snotra inbox list` reads the state dir: the node keeps the cluster's Inbox there.
      const cli = await eventually(
        () => {
          const l = listPending(n.fx.stateDir);
          return l.length === 4 ? l : null;
        },
        20_000,
        `the CLI's list on ${n.id}`,
      );
      expect(cli.map((x) => x.node)).toEqual(['node-a', 'node-a', 'node-a', 'node-a']);
      expect(listPending(n.fx.stateDir, { agentId: 'nobody' })).toEqual([]);
    }
    // Over HTTP, on a node that parked none of them: the list and one item, with the node.
    const inbox = await api('/v1/inbox');
    expect(inbox.status).toBe(200);
    const approvals = inbox.json.approvals as Array<{ id: string; node: string }>;
    expect(approvals.map((x) => [x.id, x.node]).sort()).toEqual(
      approvalIds.map((id) => [id, 'node-a']).sort(),
    );
    const item = await api(`/v1/inbox/${encodeURIComponent(approvalIds[0] as string)}`);
    expect(item.status).toBe(200);
    expect(item.json).toMatchObject({ approval: { id: approvalIds[0], node: 'node-a', status: 'pending' } });
  }, 120_000);
});

describe('the node that parked approvals follows the decisions made elsewhere', () => {
  it('decisions through B and C reach A’s Inbox, runs list and feed (within seconds: the deadline is generous for a loaded machine)', async () => {
    const [id1, id2, id3] = approvalIds as [string, string, string];
    // What a raw subscriber of the bus sees: each decision announced once (by the node whose write
    // decided it), not again by A, which parked the runs and learns the decisions.
    const announced: string[] = [];
    const sub = runtimeInternals(a.rt).bus.nats.subscribe('snotra.v1.approval.*.resolved', {
      callback: (_err, m) => {
        announced.push(m.subject.split('.')[3] ?? '');
      },
    });
    await runtimeInternals(a.rt).bus.nats.flush();
    // Through B's sidecar, as the web app does it; decided by the sidecar's user.
    const viaHttp = await api(`/v1/inbox/${encodeURIComponent(id1)}/decision`, { decision: 'approve' });
    expect(viaHttp.status).toBe(200);
    const sidecarUser = (viaHttp.json.approval as { decidedBy: string }).decidedBy;
    const again = await api(`/v1/inbox/${encodeURIComponent(id1)}/decision`, { decision: 'deny' });
    expect(again).toMatchObject({ status: 409, json: { error: { code: 'already_decided' } } });
    expect(await c.rt.approvals.decideAsync(id2, 'approved', 'carol', 'fine by me')).toMatchObject({
      ok: true,
    });
    expect(await b.rt.approvals.decideAsync(id3, 'approved', 'bob')).toMatchObject({ ok: true });
    await eventually(
      () => [id1, id2, id3].every((id) => store(a).approvals.get(id)?.status === 'approved'),
      20_000,
      'A’s store to hold the three decisions',
    );
    // A decision is recorded as what it was: by whom, through which node.
    expect(store(a).approvals.get(id2)).toMatchObject({
      status: 'approved',
      decidedBy: 'carol',
      decisionReason: 'fine by me',
    });
    const resolved = store(a)
      .audit.list({})
      .filter((e) => e.kind === 'approval_resolved');
    const through = (id: string) =>
      resolved.filter(
        (e) =>
          e.runId === store(a).approvals.get(id)?.runId &&
          (e.detail as { decidedBy?: string }).decidedBy !== undefined,
      );
    expect(through(id1).map((e) => e.detail)).toEqual([
      expect.objectContaining({ decidedBy: sidecarUser, through: 'node-b' }),
    ]);
    expect(through(id2).map((e) => e.detail)).toEqual([
      expect.objectContaining({ decidedBy: 'carol', through: 'node-c', decisionReason: 'fine by me' }),
    ]);
    // The deciding node's own chain holds the decision made through it.
    expect(
      store(c)
        .audit.list({})
        .filter((e) => e.kind === 'approval_resolved')
        .map((e) => e.detail),
    ).toContainEqual(expect.objectContaining({ approvalId: id2, decidedBy: 'carol', through: 'node-c' }));
    // Nothing of them is pending anywhere now (the fourth one is).
    for (const n of [a, b, c])
      await eventually(
        () =>
          n.rt.read
            .pendingApprovals()
            .map((x) => x.id)
            .join() === approvalIds[3],
        20_000,
        `only the fourth approval pending on ${n.id}`,
      );
    // A's feed heard the decisions (approval.resolved), by whom.
    const feedA = feeds.get('node-a') ?? [];
    for (const [id, by] of [
      [id1, sidecarUser],
      [id2, 'carol'],
      [id3, 'bob'],
    ])
      expect(feedA).toContainEqual(
        expect.objectContaining({ type: 'approval.resolved', approvalId: id, by }),
      );

    // The runs end on whichever node took their resume items; A's runs list and feed follow.
    const three = runIds.slice(0, 3);
    for (const runId of three) {
      await eventually(
        async () => (await runtimeInternals(a.rt).cluster?.records.get(runId))?.value.status === 'completed',
        60_000,
        `the shared record of ${runId} to say completed`,
      );
      await eventually(
        () => a.rt.read.runs().find((r) => r.runId === runId)?.status === 'completed',
        20_000,
        `A's runs list to show ${runId} completed`,
      );
    }
    await eventually(
      () => three.every((r) => feedA.some((e) => e.type === 'run.completed' && e.runId === r)),
      20_000,
      'A’s feed to report the three runs completed',
    );
    // Exactly once: one send per run, whichever node ran it.
    for (const runId of three)
      expect(outbox.lines().filter((l) => l.startsWith(`call:${runId}:c1 `))).toHaveLength(1);
    sub.unsubscribe();
    expect(announced.filter((id) => [id1, id2, id3].includes(id)).sort()).toEqual([id1, id2, id3].sort());
    // A never ran, started or withdrew any of them.
    const aEvents = store(a).audit.list({});
    for (const runId of three) {
      const ofRun = aEvents.filter((e) => e.runId === runId);
      if (outbox.lines().some((l) => l.startsWith(`call:${runId}:c1 node-a`))) continue;
      expect(ofRun.filter((e) => e.kind === 'started' || e.kind === 'interrupted')).toEqual([]);
      expect(ofRun.filter((e) => e.kind === 'approval_resolved' && e.status === 'expired')).toEqual([]);
    }
  }, 180_000);

  it('a decision made while A is down reaches A’s store when it starts again', async () => {
    const id4 = approvalIds[3] as string;
    const run4 = runIds[3] as string;
    await a.rt.stop();
    expect(await c.rt.approvals.decideAsync(id4, 'approved', 'carol')).toMatchObject({ ok: true });
    await eventually(
      async () => (await runtimeInternals(b.rt).cluster?.records.get(run4))?.value.status === 'completed',
      60_000,
      'the run parked on A to complete elsewhere',
    );
    const feed: RunFeedEvent[] = [];
    a.rt = await a.fx.start(model, {
      busTarget: cluster.target(),
      executorOverrides: { send_message: countingSend(outbox.file, 'node-a') },
      onRunEvent: (e) => feed.push(e),
    });
    await eventually(
      () =>
        store(a).approvals.get(id4)?.status === 'approved' &&
        a.rt.read.runs().find((r) => r.runId === run4)?.status === 'completed',
      20_000,
      'A to show the decision and the completed run after its restart',
    );
    expect(store(a).approvals.get(id4)).toMatchObject({ decidedBy: 'carol' });
    expect(a.rt.read.pendingApprovals()).toEqual([]);
    // The state dir's copy (what `snotra inbox list` reads) is rewritten right after the change.
    await eventually(() => listPending(a.fx.stateDir).length === 0, 20_000, 'the CLI list on A to empty');
    // Its earlier decisions stay decided after the restart; the run stays with the node that ran it.
    for (const id of approvalIds) expect(store(a).approvals.get(id)?.status).toBe('approved');
    expect(runtimeInternals(a.rt).runs.isLive(run4)).toBe(false);
    expect(feed).toContainEqual(expect.objectContaining({ type: 'approval.resolved', approvalId: id4 }));
    expect(outbox.lines().filter((l) => l.startsWith(`call:${run4}:c1 `))).toHaveLength(1);
    for (const n of [a, b, c]) expect(store(n).audit.verifyChain()).toMatchObject({ ok: true });
  }, 180_000);
});

describe('starting a node', () => {
  it('a second live node with the id of a running one is refused at once (no lease waited out), before it takes work', async () => {
    const dup = runtimeFixture({
      ...ASK_CONFIG,
      bus: { url: cluster.urls[0] },
      node: { id: 'node-b', leaseTtlMs: 60_000 },
    });
    try {
      const t0 = Date.now();
      const err = await dup.start(new ScriptedModel({ worker: [] }), { busTarget: cluster.target() }).then(
        () => null,
        (e: unknown) => e as { code?: string; message: string },
      );
      const elapsed = Date.now() - t0;
      expect(err?.code).toBe('cluster_node_id_in_use');
      expect(err?.message).toContain('"node-b"');
      // Not waited out: a refusal that waited for the lease to lapse would take 2 × 60 s. How long
      // the refusal takes is a figure for bench/, not a bound for a test on a loaded machine.
      expect(elapsed).toBeLessThan(60_000);
      // The live node keeps its lease and its work.
      expect(await runtimeInternals(b.rt).cluster?.alive('node-b')).toBe(true);
    } finally {
      dup.cleanup();
    }
  }, 60_000);

  it('bus.url as a list: a node starts while the first server of its list is down', async () => {
    const down = await closedPort();
    const secrets = new MemorySecretStore({ nats: cluster.token() });
    const listed = runtimeFixture({
      ...ASK_CONFIG,
      secrets: { backend: 'memory' },
      bus: { url: [`nats://127.0.0.1:${down}`, ...cluster.urls], credentials: { secret: 'nats' } },
      node: { id: 'node-d', leaseTtlMs: 1500, resumeAckWaitMs: 2000 },
    });
    const single = runtimeFixture({
      ...ASK_CONFIG,
      secrets: { backend: 'memory' },
      bus: { url: `nats://127.0.0.1:${down}`, credentials: { secret: 'nats' } },
      node: { id: 'node-e' },
    });
    try {
      const d = await listed.start(new ScriptedModel({ worker: [] }), { secretStore: secrets });
      try {
        expect(await runtimeInternals(d).cluster?.alive('node-d')).toBe(true);
        // It sees the cluster's Inbox like every other node (nothing pending now).
        expect(d.read.pendingApprovals()).toEqual([]);
      } finally {
        await d.stop();
      }
      // The same server alone (the string form, still valid) cannot be reached: a clear error.
      await expect(
        single.start(new ScriptedModel({ worker: [] }), { secretStore: secrets }),
      ).rejects.toMatchObject({
        code: 'bus_connect_failed',
      });
    } finally {
      listed.cleanup();
      single.cleanup();
    }
  }, 90_000);
});

describe('a rewind on a cluster node', () => {
  it('is refused, naming the node (other nodes’ live runs are not visible), with no live run of its own on the root, before the run or checkpoint is looked up; a dry run is not', async () => {
    const root = mkdtempSync(join(tmpdir(), 'snotra-cluster-rewind-'));
    try {
      writeFileSync(join(root, 'a.txt'), 'one\n');
      const taken = new Checkpointer(b.fx.stateDir, () => 1_700_000_000_000).take(
        { runId: runIds[0] as string, callId: 'c1', sessionId: null, tool: 'shell' },
        [{ id: 'root', path: root }],
      );
      writeFileSync(join(root, 'a.txt'), 'ONE\n');
      const who = { user: 'local:me', surface: 'cli' };
      expect(() => b.rt.runs.rewind(taken.record.id, { ...who, dryRun: false })).toThrow(
        expect.objectContaining({
          code: 'rewind_in_cluster',
          message: expect.stringContaining('cluster node node-b'),
        }),
      );
      expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('ONE\n');
      expect(b.rt.runs.rewind(taken.record.id, { ...who, dryRun: true }).changes).toHaveLength(1);
      // Through B's sidecar the refusal comes first, also for a run B's own store does not hold
      // (another node's, or none at all) and for a checkpoint that is not even an id; a dry run
      // of such a run is still 404 `unknown_run`.
      const unknown = 'worker:r-00000000-never';
      expect(b.rt.read.run(unknown)).toBeNull();
      for (const [run, checkpoint] of [
        [unknown, taken.record.id],
        [runIds[1] as string, taken.record.id],
        [unknown, 'not-an-id'],
      ]) {
        const refused = await api(`/v1/runs/${run}/rewind`, { checkpoint, dryRun: false });
        expect(refused.status).toBe(409);
        expect(refused.json).toMatchObject({ error: { code: 'rewind_in_cluster' } });
      }
      for (const run of [unknown, runIds[0] as string]) {
        const dry = await api(`/v1/runs/${run}/rewind`, { checkpoint: taken.record.id, dryRun: true });
        expect(dry).toMatchObject({ status: 404, json: { error: { code: 'unknown_run' } } });
      }
      expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('ONE\n');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
