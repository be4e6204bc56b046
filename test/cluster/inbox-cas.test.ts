import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBuckets } from '../../runtime/cluster/buckets.ts';
import { ClusterClaims } from '../../runtime/cluster/claims.ts';
import { ClusterInbox } from '../../runtime/cluster/inbox.ts';
import { RunRecords } from '../../runtime/cluster/run-records.ts';
import { silentLogger } from '../../runtime/bus/logger.ts';
import { Redactor, type ApprovalRecord } from '../../store/index.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';

let cluster: NatsCluster;
const conns: NatsConnection[] = [];
beforeAll(async () => {
  cluster = await startNatsCluster();
  // One connection per server: concurrent writes reach the stream leader through different routes.
  for (const u of cluster.urls) conns.push(await connect({ servers: [u], token: cluster.token() }));
}, 60_000);
afterAll(async () => {
  for (const nc of conns) await nc.close().catch(() => {});
  await cluster?.stop();
});

function approval(id: string): ApprovalRecord {
  return {
    id,
    v: 1,
    kind: 'tool',
    callId: `run-${id}:c1`,
    runId: `run-${id}`,
    sessionId: 's',
    taskId: null,
    agentId: 'worker',
    parentAgentId: null,
    parentRunId: null,
    surface: 'scheduled',
    tool: 'send_message',
    args: {},
    target: null,
    risk: 'external',
    reason: 'mode_ask',
    ruleId: 'mode',
    idempotencyKey: `call:run-${id}:c1`,
    resumeCheckpoint: null,
    createdAt: Date.now(),
    expiresAt: Date.now() + 60_000,
    status: 'pending',
    decidedBy: null,
    decidedAt: null,
    decisionReason: null,
    argsHash: null,
    policyHash: null,
    decidedSurface: null,
    decidedNode: null,
  };
}

describe('compare-and-swap on the replicated buckets (nats-server 2.9 in a cluster)', () => {
  it('three nodes deciding the same approval at once: exactly one wins, the others get already_decided', async () => {
    const buckets = await Promise.all(conns.map((nc) => openBuckets(nc, { replicas: 3, leaseTtlMs: 2000 })));
    const inboxes = buckets.map((b, i) => new ClusterInbox(b.inbox, `node-${i}`, new Redactor()));
    for (let i = 0; i < 25; i++) {
      const id = `ap-${i}`;
      await inboxes[0]?.open(approval(id));
      const results = await Promise.all(
        inboxes.map((inbox, n) =>
          inbox.decide(id, n % 2 === 0 ? 'approved' : 'denied', `user-${n}`, Date.now()),
        ),
      );
      const winners = results.filter((r) => r.ok);
      expect(winners, `approval ${id}`).toHaveLength(1);
      for (const r of results.filter((x) => !x.ok))
        expect(r).toMatchObject({ ok: false, reason: 'already_decided' });
      const stored = await inboxes[1]?.get(id);
      expect(stored?.value.decidedBy).toBe(winners[0]?.approval?.decidedBy);
    }
  }, 60_000);

  it('a decision after the deadline is refused as expired, and an expired one cannot be decided', async () => {
    const [b] = await Promise.all(
      conns.slice(0, 1).map((nc) => openBuckets(nc, { replicas: 3, leaseTtlMs: 2000 })),
    );
    const inbox = new ClusterInbox(b!.inbox, 'node-0', new Redactor());
    const a = { ...approval('late'), expiresAt: Date.now() - 1 };
    await inbox.open(a);
    expect(await inbox.decide('late', 'approved', 'alice', Date.now())).toMatchObject({
      ok: false,
      reason: 'expired',
    });
    expect((await inbox.get('late'))?.value.status).toBe('expired');
    expect(await inbox.decide('nope', 'approved', 'alice', Date.now())).toMatchObject({
      ok: false,
      reason: 'not_found',
    });
  });

  it('three nodes claiming the same call at once: exactly one runs it, the others see it taken or finished', async () => {
    const buckets = await Promise.all(conns.map((nc) => openBuckets(nc, { replicas: 3, leaseTtlMs: 2000 })));
    const claims = buckets.map(
      (b, i) => new ClusterClaims(b.claims, `node-${i}`, Date.now, silentLogger, 10_000, () => false),
    );
    for (let i = 0; i < 25; i++) {
      const key = `call:run-${i}:c1`;
      const out = await Promise.all(
        claims.map((c) => c.claim(key, { runId: `run-${i}`, callId: 'c1', tool: 'send_message' })),
      );
      expect(
        out.filter((o) => o.state === 'claimed'),
        key,
      ).toHaveLength(1);
      expect(out.filter((o) => o.state === 'taken')).toHaveLength(2);
      for (const o of out.filter((x) => x.state === 'taken')) expect(o).toMatchObject({ attempt: 1 });
      const winner = out.findIndex((o) => o.state === 'claimed');
      await claims[winner]?.settle(key, 'completed', { content: 'done' });
      const later = await claims[(winner + 1) % 3]?.claim(key, {
        runId: `run-${i}`,
        callId: 'c1',
        tool: 'send_message',
      });
      expect(later).toEqual({ state: 'completed', stored: { content: 'done' } });
    }
  }, 60_000);

  it('an unfinished claim of an idempotent call is taken again by exactly one node at a time', async () => {
    const buckets = await Promise.all(conns.map((nc) => openBuckets(nc, { replicas: 3, leaseTtlMs: 2000 })));
    const claims = buckets.map(
      (b, i) => new ClusterClaims(b.claims, `node-${i}`, Date.now, silentLogger, 10_000, () => false),
    );
    for (let i = 0; i < 10; i++) {
      const key = `call:retake-${i}:c1`;
      const call = { runId: `retake-${i}`, callId: 'c1', tool: 'write_file' };
      expect(await claims[0]?.claim(key, call)).toEqual({ state: 'claimed' });
      // node-0 died mid-call: the others find it taken, and both try to take it again at once.
      expect(await claims[1]?.claim(key, call)).toEqual({ state: 'taken', node: 'node-0', attempt: 1 });
      const again = await Promise.all([claims[1]?.retake(key, 1), claims[2]?.retake(key, 1)]);
      expect(
        again.filter((o) => o?.state === 'claimed'),
        key,
      ).toHaveLength(1);
      expect(
        again.filter((o) => o?.state === 'taken'),
        key,
      ).toHaveLength(1);
      expect((await claims[0]?.get(key))?.attempt).toBe(2);
      await claims[1]?.settle(key, 'completed', { content: 'written' });
      expect(await claims[2]?.retake(key, 2)).toEqual({ state: 'completed', stored: { content: 'written' } });
    }
  }, 60_000);

  it('two nodes taking over the same run revision: exactly one owns it', async () => {
    const buckets = await Promise.all(conns.map((nc) => openBuckets(nc, { replicas: 3, leaseTtlMs: 2000 })));
    const records = buckets.map((b) => new RunRecords(b.runs, new Redactor()));
    for (let i = 0; i < 25; i++) {
      const runId = `take-${i}`;
      const envelope = {
        $schemaVersion: 1,
        runId,
        agentId: 'worker',
        surface: 'scheduled',
        status: 'running',
        parentRunId: null,
        updatedAt: 1,
        snapshot: { value: 'running' },
      };
      const rev = await records[0]?.create({
        v: 1,
        runId,
        owner: 'dead',
        status: 'running',
        approvalId: null,
        approval: null,
        envelope,
        updatedAt: 1,
      });
      expect(rev).not.toBeNull();
      const out = await Promise.all(
        records.map((r, n) =>
          r.update(
            {
              v: 1,
              runId,
              owner: `node-${n}`,
              status: 'running',
              approvalId: null,
              approval: null,
              envelope,
              updatedAt: 2,
            },
            rev as number,
          ),
        ),
      );
      expect(
        out.filter((r) => r !== null),
        runId,
      ).toHaveLength(1);
      const owner = out.findIndex((r) => r !== null);
      expect((await records[2]?.get(runId))?.value.owner).toBe(`node-${owner}`);
    }
  }, 60_000);
});
