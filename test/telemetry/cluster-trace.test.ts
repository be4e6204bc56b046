// One trace across two cluster nodes (issue 39), on a real three-server JetStream cluster with
// two runtime nodes in this process and a real OpenAI-compatible model server: a run parks on
// node A, A stops, the approval is decided through node B, B takes the run over and finishes it.
// Every span of the run, from A's first to B's last, is in the trace A began; the bus messages
// about the run carry its W3C `traceparent` header, and B, which decided, publishes the one
// `approval.resolved` (A, which parked the run, is gone); each `chat` span names the model the
// server said answered (`gen_ai.response.model`), not the one asked for, also when the server
// reported no token usage for that answer.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiCompatibleModel } from '../../actors/model/openai-compatible.ts';
import { TRACEPARENT_HEADER } from '../../runtime/bus/index.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { startNode, sharedOutbox, type TestNode } from '../cluster/helpers.ts';
import { FakeModelServer, type FakeReply, type SeenRequest } from '../model/fake-server.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';
import { eventually } from '../support/runtime.ts';
import { OtlpReceiver, type ExportedSpan } from './otlp-receiver.ts';

const REQUESTED = 'requested-model-1';
const SERVED = 'served-model-2026-12-01';

/**
 * One streamed Chat Completions answer from a server that reports `SERVED` as its model, with a
 * usage chunk unless `usage` is false (a server that ignores `stream_options.include_usage`).
 */
function answer(delta: Record<string, unknown>, finish: string, usage = true): FakeReply {
  const chunk = (body: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: SERVED, ...body })}\n\n`;
  return {
    sse: [
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', ...delta }, finish_reason: null }] }),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: finish }] }),
      ...(usage ? [chunk({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 6 } })] : []),
      'data: [DONE]\n\n',
    ],
  };
}

/** Asks for one send; once its result is in the conversation, answers. */
function route(req: SeenRequest): FakeReply {
  const messages = (req.body.messages ?? []) as { role?: string }[];
  // The last answer names its model but reports no usage, though include_usage asked for it.
  if (messages.some((m) => m.role === 'tool')) return answer({ content: 'notified' }, 'stop', false);
  const args = JSON.stringify({ channel: '#ops', text: 'deploy done' });
  return answer(
    {
      tool_calls: [
        { index: 0, id: 'call_1', type: 'function', function: { name: 'send_message', arguments: args } },
      ],
    },
    'tool_calls',
  );
}

let cluster: NatsCluster;
let server: FakeModelServer;
let watcher: NatsConnection;
const receiver = new OtlpReceiver();
/** Every message seen on the runtime's subjects, with its `traceparent` header ('' when none). */
const seen: { subject: string; traceparent: string }[] = [];
const nodes: TestNode[] = [];

beforeAll(async () => {
  [cluster, server] = await Promise.all([startNatsCluster(), FakeModelServer.start(), receiver.start()]);
  server.route = route;
  watcher = await connect({ servers: [...cluster.urls], token: cluster.token(), timeout: 5000 });
  watcher.subscribe('snotra.v1.>', {
    callback: (_err, msg) => {
      seen.push({ subject: msg.subject, traceparent: msg.headers?.get(TRACEPARENT_HEADER) ?? '' });
    },
  });
  await watcher.flush();
}, 60_000);
afterAll(async () => {
  for (const n of nodes.splice(0)) {
    await n.rt.stop().catch(() => {});
    n.fx.cleanup();
  }
  await watcher?.close();
  await Promise.all([cluster?.stop(), server?.close(), receiver.stop()]);
});

function start(id: string, outbox: string): Promise<TestNode> {
  const provider = new OpenAiCompatibleModel({
    baseUrl: `${server.url}/v1`,
    model: REQUESTED,
    retryBaseMs: 10,
  });
  const config = {
    agents: {
      worker: {
        mode: 'ask',
        budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 120_000 },
        model: { provider: 'openai-compatible', baseUrl: `${server.url}/v1`, model: REQUESTED },
      },
    },
    telemetry: { otlp: { endpoint: receiver.url } },
  };
  return startNode(cluster, id, provider, outbox, config).then((n) => (nodes.push(n), n));
}

const traceIdOf = (traceparent: string): string => traceparent.split('-')[1] ?? '';

describe('a run taken over by another cluster node continues its trace', () => {
  it('parked on A, A stopped, decided through B: one trace id from A’s first span to B’s last', async () => {
    const outbox = sharedOutbox();
    const a = await start('node-otel-a', outbox.file);
    const runId = await a.rt.runs.runTask('worker', 'deploy', 'tell #ops');
    const pending = await eventually(
      () => runtimeInternals(a.rt).store.approvals.listPending()[0],
      20_000,
      'the Inbox record on A',
    );
    await eventually(() => !runtimeInternals(a.rt).runs.isLive(runId), 15_000, 'the run to park on A');
    const first = runtimeInternals(a.rt).store.runTraces.get(runId);
    expect(first?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const traceId = traceIdOf(first!.traceparent);
    // The shared run record carries it: the only thing of A's a node taking the run over reads.
    const record = await eventually(
      async () => {
        const r = await runtimeInternals(a.rt).cluster?.records.get(runId);
        return r?.value.status === 'waiting_for_approval' && r.value.trace !== undefined ? r.value : null;
      },
      20_000,
      'the parked run’s record with its trace',
    );
    expect(record.trace?.traceparent).toBe(first!.traceparent);
    expect(record.trace?.attrs).toMatchObject({ 'gen_ai.agent.name': 'worker', 'snotra.run.id': runId });
    await a.rt.stop();

    const b = await start('node-otel-b', outbox.file);
    expect(runtimeInternals(b.rt).store.runTraces.get(runId)).toBeNull();
    const decided = await runtimeInternals(b.rt).cluster?.decide(pending.id, 'approved', 'alice');
    expect(decided).toMatchObject({ ok: true });
    await eventually(
      () => runtimeInternals(b.rt).store.snapshots.get(runId)?.status === 'completed',
      60_000,
      'the run to complete on B',
    );
    expect(outbox.lines()).toEqual([`call:${runId}:c00000000 node-otel-b #ops`]);
    // B stored the trace it continued (from the record) before restoring the run.
    expect(runtimeInternals(b.rt).store.runTraces.get(runId)?.traceparent).toBe(first!.traceparent);
    await b.rt.stop(); // flushes B's spans

    const spans = receiver.spans();
    const runSpans = spans.filter(
      (s) => s.name === 'invoke_agent worker' && s.attrs['snotra.run.id'] === runId,
    );
    expect(runSpans.length).toBeGreaterThanOrEqual(2);
    const [opened, ...resumed] = runSpans;
    expect(opened!.parentSpanId).toBe('');
    for (const s of resumed) {
      expect(s.traceId).toBe(traceId);
      expect(s.parentSpanId).toBe(opened!.spanId);
      expect(s.attrs).toMatchObject({ 'snotra.run.resumed': true, 'gen_ai.agent.name': 'worker' });
    }
    const inTrace = spans.filter((s) => s.traceId === traceId);
    // A's spans (its first chat, the parked call) and B's (the approval wait, the approved call,
    // the last chat) — all in the one trace.
    expect(inTrace.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        'invoke_agent worker',
        `chat ${REQUESTED}`,
        'execute_tool send_message',
        'await_approval',
      ]),
    );
    expect(
      inTrace.filter((s) => s.name === 'execute_tool send_message' && s.attrs['snotra.tool.resumed']),
    ).toHaveLength(1);
    const chats = inTrace.filter((s) => s.name.startsWith('chat '));
    expect(chats).toHaveLength(2);
    for (const chat of chats)
      expect(chat.attrs).toMatchObject({
        'gen_ai.request.model': REQUESTED,
        'gen_ai.response.model': SERVED,
      });
    const [asked, answered] = chats as [ExportedSpan, ExportedSpan];
    expect(asked.attrs).toMatchObject({ 'gen_ai.usage.input_tokens': 40, 'gen_ai.usage.output_tokens': 6 });
    // The answer without a usage chunk: its model all the same, and no token counts made up.
    expect(answered.attrs['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(answered.attrs['gen_ai.usage.output_tokens']).toBeUndefined();
    for (const r of server.requests)
      expect((r.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage).toBe(true);
    // Nothing of the run's went into another trace.
    expect(spans.filter((s) => s.attrs['snotra.run.id'] === runId && s.traceId !== traceId)).toEqual([]);

    // The bus messages about the run carry its trace context in the `traceparent` header.
    const about = (prefix: string) => seen.filter((m) => m.subject.startsWith(prefix));
    const statuses = about('snotra.v1.run.').filter((m) => m.subject.endsWith('.status'));
    expect(statuses.length).toBeGreaterThan(0);
    for (const m of statuses) expect(traceIdOf(m.traceparent), m.subject).toBe(traceId);
    const requested = about(`snotra.v1.approval.${pending.id}.requested`);
    expect(requested).toHaveLength(1);
    expect(traceIdOf(requested[0]!.traceparent)).toBe(traceId);
    // The resume item B queued for its own decision: the context came from the shared record.
    const items = about('snotra.v1.cluster.resume');
    expect(items.length).toBeGreaterThan(0);
    for (const m of items) expect(traceIdOf(m.traceparent)).toBe(traceId);
    // A, which parked the run, was gone: B, whose write decided it, says so on the bus, once.
    const resolvedOn = `snotra.v1.approval.${pending.id}.resolved`;
    await eventually(() => about(resolvedOn).length > 0, 20_000, 'approval.resolved on the bus');
    const resolved = about(resolvedOn);
    expect(resolved).toHaveLength(1);
    expect(traceIdOf(resolved[0]!.traceparent)).toBe(traceId);
  }, 180_000);
});
