import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARGS_NOT_KEPT_MESSAGE } from '../../actors/run/args-at-rest.ts';
import { executeOnce, type ExecuteDeps } from '../../actors/run/execute.ts';
import { toObservation } from '../../actors/tools/index.ts';
import type { ExecuteInput } from '../../machines/run/types.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import { openBuckets } from '../../runtime/cluster/buckets.ts';
import { ClusterClaims } from '../../runtime/cluster/claims.ts';
import { silentLogger } from '../../runtime/bus/logger.ts';
import { allowDecision, openTemp } from '../store/helpers.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';

let cluster: NatsCluster;
let nc: NatsConnection;
beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await connect({ servers: [...cluster.urls], token: cluster.token() });
}, 60_000);
afterAll(async () => {
  await nc?.close().catch(() => {});
  await cluster?.stop();
});

/** Node `node`'s execution deps: its own SQLite store, the shared claims, a send that counts. */
async function nodeDeps(node: string, sent: string[]): Promise<{ deps: ExecuteDeps; claims: ClusterClaims }> {
  const { store } = openTemp();
  const buckets = await openBuckets(nc, { replicas: 3, leaseTtlMs: 2000 });
  const claims = new ClusterClaims(buckets.claims, node, Date.now, silentLogger, 10_000, () => false);
  const deps: ExecuteDeps = {
    store,
    registry: ToolRegistry.withBuiltins(),
    executors: {
      send_message: {
        async execute(args) {
          sent.push(`${String(args.channel)} ${String(args.text)}`);
          return { delivered: true };
        },
      },
    },
    contextFor: () => ({}) as never,
    observe: (outcome) => toObservation(outcome, store.redactor),
    runMeta: () => ({ sessionId: 's', agentId: 'worker', surface: 'scheduled' }),
    claims,
  };
  return { deps, claims };
}

/** The call as a restored run holds it: its text redacted in the stored snapshot. */
function restored(runId: string): ExecuteInput {
  return {
    runId,
    call: {
      id: 'c1',
      tool: 'send_message',
      args: { channel: '#ops', text: 'deploy with [REDACTED]' },
      argsRedactedAtRest: true,
    },
    decision: { ...allowDecision, risk: 'external', targets: [] },
    idempotencyKey: `call:${runId}:c1`,
  };
}

describe('in a cluster, a call restored with redacted arguments asks the claims before it reports', () => {
  it('ran to completion on another node before the run moved: its outcome there is reused, nothing is sent again', async () => {
    const sent: string[] = [];
    const { deps } = await nodeDeps('node-b', sent);
    const a = await nodeDeps('node-a', sent);
    const input = restored('moved-1');
    expect(
      await a.claims.claim(input.idempotencyKey, { runId: 'moved-1', callId: 'c1', tool: 'send_message' }),
    ).toEqual({
      state: 'claimed',
    });
    await a.claims.settle(input.idempotencyKey, 'completed', { content: '{"delivered":true}' });
    expect(await executeOnce(input, deps, { argsLost: true })).toEqual({
      kind: 'tool.result',
      callId: 'c1',
      tool: 'send_message',
      content: '{"delivered":true}',
    });
    expect(sent).toEqual([]);
  }, 60_000);

  it('never claimed: not run, and settled failed cluster-wide so that no node runs it later', async () => {
    const sent: string[] = [];
    const b = await nodeDeps('node-b', sent);
    const a = await nodeDeps('node-a', sent);
    const input = restored('moved-2');
    expect(await executeOnce(input, b.deps, { argsLost: true })).toEqual({
      kind: 'tool.interrupted',
      callId: 'c1',
      tool: 'send_message',
      message: ARGS_NOT_KEPT_MESSAGE,
    });
    expect(b.deps.store.ledger.lookup(input.idempotencyKey)).toBeNull();
    expect(b.deps.store.audit.list({ runId: 'moved-2' }).map((e) => e.kind)).toEqual(['interrupted']);
    expect(await b.claims.get(input.idempotencyKey)).toMatchObject({ status: 'failed', node: 'node-b' });
    // Node A, handed the same call (with its arguments raw, say), finds it settled and does not run it.
    const raw = { ...input, call: { id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'x' } } };
    expect(await executeOnce(raw, a.deps)).toMatchObject({
      kind: 'tool.failed',
      message: ARGS_NOT_KEPT_MESSAGE,
    });
    expect(sent).toEqual([]);
  }, 60_000);

  it('started on a node that died mid-call: reported interrupted, not run again', async () => {
    const sent: string[] = [];
    const b = await nodeDeps('node-b', sent);
    const a = await nodeDeps('node-a', sent);
    const input = restored('moved-3');
    await a.claims.claim(input.idempotencyKey, { runId: 'moved-3', callId: 'c1', tool: 'send_message' });
    const out = await executeOnce(input, b.deps, { argsLost: true });
    expect(out).toMatchObject({ kind: 'tool.interrupted' });
    expect(JSON.stringify(out)).toContain('started on node node-a');
    expect(sent).toEqual([]);
  }, 60_000);
});
