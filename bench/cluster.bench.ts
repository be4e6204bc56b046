/**
 * Cluster mode costs on a real three-server JetStream cluster on loopback (runtime/cluster/local-cluster.ts),
 * with runtime nodes as in-process `Runtime.start` instances (parts 1-2) or child processes (part 3,
 * SIGKILL). The model is scripted (instant); `send_message` appends a line to a file.
 *
 * Run: `npx tsx bench/cluster.bench.ts`. Prints one JSON document (ms, 3 decimals).
 *
 * Parts:
 *  1. Parked-run throughput: N unattended runs of an agent in `ask` mode are submitted at once
 *     (spread over the nodes' `runTask`; the shared agent queue hands them to any node) and timed
 *     until every one has parked (approval in the Inbox, actor stopped; in cluster mode also the run
 *     record mirrored and the request in the shared Inbox). Variants: the embedded single-node
 *     default, cluster mode with 1 node, cluster mode with 3 nodes.
 *  2. Resume latency: the parked runs are approved one at a time (embedded: `decide`; cluster:
 *     `cluster.decide` through node 0) and each is timed from the decision to its `run.completed`
 *     on whichever node resumed it; then the rest are approved at once (resume throughput).
 *  3. Node loss → resumption elsewhere: node A (child process) runs a call that never returns, is
 *     SIGKILLed, and node B's `run.completed` (lease TTL 1500 ms, resume ack wait 2000 ms) is timed
 *     from the kill; and a parked run of a SIGKILLed node approved through B, from the decision.
 *
 * Env: BENCH_PARKED (part 1 N, default 100), BENCH_RESUME_SEQ (part 2 sequential, default 30),
 * BENCH_LOSS_ROUNDS (part 3, default 3).
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModel, type ScriptedStep } from '../actors/model/scripted.ts';
import { startLocalCluster, type NatsCluster } from '../runtime/cluster/local-cluster.ts';
import type { Runtime } from '../runtime/runtime.ts';
import { startChildNode } from '../test/cluster/child-node.ts';
import { ASK_CONFIG, countingSend, NOTIFY, sharedOutbox, startNode } from '../test/cluster/helpers.ts';
import { runtimeFixture, type RuntimeFixture } from '../test/support/runtime.ts';
import { summarize } from './stats.ts';
import { runtimeInternals } from '../runtime/testing.ts';

const N = Number(process.env.BENCH_PARKED ?? 100);
const SEQ = Number(process.env.BENCH_RESUME_SEQ ?? 30);
const LOSS_ROUNDS = Number(process.env.BENCH_LOSS_ROUNDS ?? 3);
const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const stats = (xs: number[]) => {
  const s = summarize(xs);
  return { median: r3(s.median), p99: r3(s.p99), min: r3(s.min), max: r3(s.max), n: s.n };
};

interface Variant {
  readonly name: string;
  readonly runtimes: Runtime[];
  readonly decide: (approvalId: string) => Promise<void>;
  readonly cleanup: () => Promise<void>;
}

async function embedded(outbox: string): Promise<Variant> {
  const fx = runtimeFixture({
    ...ASK_CONFIG,
    agents: {
      worker: { ...ASK_CONFIG.agents.worker, budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 600_000 } },
    },
  });
  const rt = await fx.start(new ScriptedModel({ worker: NOTIFY }), {
    executorOverrides: { send_message: countingSend(outbox, 'embedded') },
  });
  return {
    name: 'embedded single node',
    runtimes: [rt],
    decide: async (id) => {
      const r = rt.decide(id, 'approved', 'bench');
      if (!r.ok) throw new Error(`decide ${id}: ${r.reason}`);
    },
    cleanup: async () => {
      await rt.stop();
      fx.cleanup();
    },
  };
}

async function clustered(cluster: NatsCluster, nodes: number, outbox: string, tag: string): Promise<Variant> {
  const started: { rt: Runtime; fx: RuntimeFixture }[] = [];
  for (let i = 0; i < nodes; i++) {
    started.push(
      await startNode(cluster, `${tag}-${i}`, new ScriptedModel({ worker: NOTIFY }), outbox, {
        agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 600_000 } } },
      }),
    );
  }
  const first = started[0]?.rt as Runtime;
  return {
    name: `cluster, ${nodes} node${nodes === 1 ? '' : 's'}`,
    runtimes: started.map((s) => s.rt),
    decide: async (id) => {
      const r = await runtimeInternals(first).cluster?.decide(id, 'approved', 'bench');
      if (r?.ok !== true) throw new Error(`decide ${id}: ${r?.ok === false ? r.reason : 'no cluster'}`);
    },
    cleanup: async () => {
      for (const s of started) {
        await s.rt.stop();
        s.fx.cleanup();
      }
    },
  };
}

/** Counts feed events of every node: parked approvals by run, completions by run. */
function watch(v: Variant) {
  const parked = new Map<string, string>();
  const completed = new Map<string, number>();
  const waiters = new Set<() => void>();
  for (const rt of v.runtimes) {
    rt.runs.onRunEvent((e) => {
      if (e.type === 'run.parked') parked.set(e.runId, e.approvalId);
      if (e.type === 'run.completed') completed.set(e.runId, performance.now());
      for (const w of waiters) w();
    });
  }
  const until = (cond: () => boolean, what: string, timeoutMs = 300_000) =>
    new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (cond()) {
          waiters.delete(check);
          clearTimeout(t);
          resolve();
        }
      };
      const t = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${v.name}: timed out waiting for ${what}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { parked, completed, until };
}

async function parkAndResume(v: Variant, tag: string) {
  const w = watch(v);
  const t0 = performance.now();
  const runIds = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      (v.runtimes[i % v.runtimes.length] as Runtime).runs.runTask('worker', `${tag}-${i}`, 'go'),
    ),
  );
  await w.until(() => runIds.every((r) => w.parked.has(r)), `${N} runs to park`);
  const parkMs = performance.now() - t0;
  const perNode = v.runtimes.map(
    (rt) => runIds.filter((r) => runtimeInternals(rt).store.approvals.getByCall(`${r}:c1`) !== null).length,
  );
  const seq: number[] = [];
  for (const runId of runIds.slice(0, SEQ)) {
    const start = performance.now();
    await v.decide(w.parked.get(runId) as string);
    await w.until(() => w.completed.has(runId), `${runId} to complete`);
    seq.push((w.completed.get(runId) as number) - start);
  }
  const rest = runIds.slice(SEQ);
  const t1 = performance.now();
  await Promise.all(rest.map((r) => v.decide(w.parked.get(r) as string)));
  await w.until(() => rest.every((r) => w.completed.has(r)), 'the rest to complete');
  const restMs = performance.now() - t1;
  return {
    variant: v.name,
    parked: { runs: N, totalMs: r3(parkMs), perSecond: r3((N / parkMs) * 1000), openedPerNode: perNode },
    resumeLatencyMs: stats(seq),
    resumeAtOnce: { runs: rest.length, totalMs: r3(restMs), perSecond: r3((rest.length / restMs) * 1000) },
  };
}

async function nodeLoss(cluster: NatsCluster, root: string) {
  const midCall: number[] = [];
  const parked: number[] = [];
  const script: ScriptedStep[] = [
    {
      respond: {
        kind: 'calls',
        calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'x' } }],
      },
    },
    { respond: { kind: 'final', text: 'done' } },
  ];
  for (let i = 0; i < LOSS_ROUNDS; i++) {
    const outbox = sharedOutbox();
    const hang = join(root, `hang-${i}`);
    writeFileSync(hang, '');
    const base = { cluster, root, outbox: outbox.file };
    const a = await startChildNode({
      ...base,
      id: `loss-a${i}`,
      script: [...script],
      mode: 'allow',
      hangFile: hang,
    });
    a.send({ cmd: 'task', task: `loss-${i}` });
    const { runId } = await a.waitFor((e) => e.event === 'task', 'task');
    await a.waitFor((e) => e.event === 'called', 'the call on A');
    const b = await startChildNode({ ...base, id: `loss-b${i}`, script: [...script], mode: 'allow' });
    const t0 = performance.now();
    await a.kill();
    await b.waitFor((e) => e.event === 'run.completed' && e.runId === runId, 'resumption on B', 120_000);
    midCall.push(performance.now() - t0);
    await b.stop();

    const a2 = await startChildNode({ ...base, id: `park-a${i}`, script: [...NOTIFY], mode: 'ask' });
    a2.send({ cmd: 'task', task: `park-${i}` });
    const approval = await a2.waitFor((e) => e.event === 'approval', 'approval');
    await a2.waitFor((e) => e.event === 'run.parked', 'park');
    const b2 = await startChildNode({ ...base, id: `park-b${i}`, script: [...NOTIFY], mode: 'ask' });
    await a2.kill();
    const t1 = performance.now();
    b2.send({ cmd: 'decide', id: approval.id, user: 'bench' });
    await b2.waitFor(
      (e) => e.event === 'run.completed' && e.runId === approval.runId,
      'resume on B',
      120_000,
    );
    parked.push(performance.now() - t1);
    await b2.stop();
  }
  return {
    leaseTtlMs: 1500,
    resumeAckWaitMs: 2000,
    killMidCallToCompletedElsewhereMs: stats(midCall),
    parkedOnDeadNodeDecisionToCompletedElsewhereMs: stats(parked),
  };
}

const loadBefore = loadavg().map(r3);
const root = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-cluster-bench-')));
process.env.XDG_STATE_HOME = join(root, 'xdg');
const cluster = await startLocalCluster({ clusterName: 'snotra-bench' });
const results: unknown[] = [];
try {
  const outbox = sharedOutbox();
  const variants: (() => Promise<Variant>)[] = [
    () => embedded(outbox.file),
    () => clustered(cluster, 1, outbox.file, 'one'),
    () => clustered(cluster, 3, outbox.file, 'three'),
  ];
  for (const [i, make] of variants.entries()) {
    const v = await make();
    try {
      results.push(await parkAndResume(v, `v${i}`));
    } finally {
      await v.cleanup();
    }
  }
  const loss = await nodeLoss(cluster, root);
  process.stdout.write(
    `${JSON.stringify(
      {
        machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', loadavgBefore: loadBefore },
        nats: '3 × nats-server on loopback, JetStream R3 (file storage)',
        parkAndResume: results,
        nodeLoss: loss,
        loadavgAfter: loadavg().map(r3),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await cluster.stop();
  rmSync(root, { recursive: true, force: true });
}
