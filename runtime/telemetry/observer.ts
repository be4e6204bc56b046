import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { RunFeedEvent, RunFeedEventHeader } from '../events.ts';
import type { StepModel } from '../run-feed.ts';
import { redactedAttributes, redactedJson, type AttributeRedactor } from './attributes.ts';
import type { TelemetryMetrics } from './metrics.ts';
import { fromTraceparent, toTraceparent } from './trace-context.ts';

/** What the observer reads and writes besides the feed. */
export interface ObserverDeps {
  readonly tracer: Tracer;
  readonly metrics: TelemetryMetrics;
  readonly redactor: AttributeRedactor;
  readonly captureContent: boolean;
  /** The model an agent asks (`gen_ai.request.model`), when configured. */
  readonly modelOf: (agentId: string) => { provider: string; model: string | null } | null;
  /** Stores a run's trace context once, when the run starts. */
  readonly saveTrace: (runId: string, traceparent: string, attrs: Record<string, string>) => void;
  /** A run's stored trace context: how a run resumed after a restart continues its trace. */
  readonly loadTrace: (runId: string) => { traceparent: string; attrs: Record<string, string> } | null;
  /** What the Inbox knows of an approval (its request time, the surface that decided it). */
  readonly approval: (id: string) => {
    createdAt: number;
    decidedSurface: string | null;
    tool: string;
    reason: string;
    ruleId: string;
    kind: string;
  } | null;
}

interface ToolSpan {
  readonly span: Span;
  readonly start: number;
  readonly tool: string;
}

interface RunSpans {
  readonly span: Span;
  readonly ctx: Context;
  readonly agentId: string;
  /** When the run's next model step began (its `chat` span opens lazily). */
  chatStart: number;
  chat: Span | null;
  readonly tools: Map<string, ToolSpan>;
}

const seconds = (ms: number): number => Math.max(0, ms) / 1000;

/**
 * Turns the run feed (runtime/events.ts) into spans per the OpenTelemetry GenAI semantic
 * conventions: `invoke_agent` per run (a sub-agent's under its parent's `spawn_agent` call),
 * `chat` per model call, `execute_tool` per tool call, `await_approval` per approval wait; and
 * counts the metrics. A run first seen after a restart (parked, then resumed) continues the
 * trace stored when it started. Every string it exports passes the redactor; argument values,
 * results and model text only with `captureContent`.
 */
export class TelemetryObserver {
  readonly #runs = new Map<string, RunSpans>();
  /** The context a run's starting message came with, until the run starts (bounded). */
  readonly #arrived = new Map<string, SpanContext>();

  constructor(private readonly deps: ObserverDeps) {}

  #text(value: string): string {
    return this.deps.redactor.redactString(value);
  }

  #attrs(values: Record<string, string | number | boolean | null | undefined>) {
    return redactedAttributes(this.deps.redactor, values);
  }

  /** Hears one feed event; never throws (the feed logs a throwing listener, but spans would leak). */
  readonly listener = (e: RunFeedEvent): void => {
    switch (e.type) {
      case 'run.started':
        this.#start(e);
        return;
      case 'model.delta':
        this.#chat(this.#run(e), e.ts);
        return;
      case 'model.text': {
        const chat = this.#chat(this.#run(e), e.ts);
        if (this.deps.captureContent)
          chat.setAttribute(
            'gen_ai.output.messages',
            redactedJson(this.deps.redactor, [
              { role: 'assistant', parts: [{ type: 'text', content: e.delta }] },
            ]),
          );
        return;
      }
      case 'model.usage': {
        const run = this.#run(e);
        const chat = this.#chat(run, e.ts);
        chat.setAttributes({
          'gen_ai.usage.input_tokens': e.inputTokens,
          'gen_ai.usage.output_tokens': e.outputTokens,
        });
        const attrs = this.#attrs(this.#modelAttrs(run.agentId));
        this.deps.metrics.tokens.record(e.inputTokens, { ...attrs, 'gen_ai.token.type': 'input' });
        this.deps.metrics.tokens.record(e.outputTokens, { ...attrs, 'gen_ai.token.type': 'output' });
        return;
      }
      case 'tool.proposed':
        this.#proposed(e);
        return;
      case 'tool.decided': {
        const d = e.decision;
        this.#run(e)
          .tools.get(e.callId)
          ?.span.setAttributes(
            this.#attrs({
              'snotra.policy.decision': d.decision,
              'snotra.policy.reason': d.reason,
              'snotra.policy.rule': d.rule.id,
              'snotra.policy.rule_source': d.rule.source,
              'snotra.policy.human_required': d.humanRequired,
              'snotra.policy.risk': d.risk,
            }),
          );
        this.deps.metrics.decisions.add(
          1,
          this.#attrs({ 'snotra.policy.decision': d.decision, 'snotra.policy.reason': d.reason }),
        );
        return;
      }
      case 'approval.requested':
        this.#run(e).tools.get(e.callId)?.span.setAttribute('snotra.approval.id', e.approvalId);
        return;
      case 'budget.requested':
        this.#run(e);
        return;
      case 'approval.resolved':
        this.#resolved(e);
        return;
      case 'tool.completed':
      case 'tool.denied':
        this.#toolEnded(e);
        return;
      case 'run.parked':
        this.#close(
          this.#run(e),
          e.ts,
          { 'snotra.run.parked': true, 'snotra.approval.id': e.approvalId },
          {
            'snotra.tool.parked': true,
          },
        );
        this.#runs.delete(e.runId);
        return;
      case 'run.completed':
      case 'run.failed': {
        const run = this.#run(e);
        run.span.setAttributes(
          this.#attrs({ 'snotra.run.outcome': e.outcome, 'snotra.run.reason': e.reason }),
        );
        if (e.type === 'run.failed')
          run.span.setStatus({ code: SpanStatusCode.ERROR, message: this.#text(e.reason) });
        this.#close(run, e.ts, {}, {});
        this.#runs.delete(e.runId);
        this.deps.metrics.runsEnded.add(
          1,
          this.#attrs({ 'snotra.run.outcome': e.outcome, 'snotra.run.reason': e.reason }),
        );
        return;
      }
      default: {
        const never: never = e;
        void never;
      }
    }
  };

  /**
   * The model the server said answered a step (`gen_ai.response.model` of its `chat` span), heard
   * apart from the step's token usage, which a server may not report.
   */
  readonly stepModel = (e: StepModel): void => {
    this.#chat(this.#run(e), e.ts).setAttribute('gen_ai.response.model', this.#text(e.responseModel));
  };

  /**
   * The run's trace context for the messages sent about it: its open `invoke_agent` span here,
   * else the context stored when it started (a parked run); null when telemetry never saw it.
   */
  traceOf(runId: string): { traceparent: string; tracestate?: string } | null {
    const live = this.#runs.get(runId);
    if (live === undefined) {
      const stored = this.deps.loadTrace(runId);
      return stored === null ? null : { traceparent: stored.traceparent };
    }
    const ctx = live.span.spanContext();
    const state = ctx.traceState?.serialize() ?? '';
    return { traceparent: toTraceparent(ctx), ...(state !== '' ? { tracestate: state } : {}) };
  }

  /**
   * The message that starts `runId` came with `traceparent` (a NATS header): the run's
   * `invoke_agent` span is its child. A malformed one is ignored; at most 1024 wait at once.
   */
  parentArrived(runId: string, traceparent: string): void {
    const remote = fromTraceparent(traceparent);
    if (remote === null) return;
    this.#arrived.delete(runId);
    this.#arrived.set(runId, remote);
    if (this.#arrived.size > 1024) this.#arrived.delete(this.#arrived.keys().next().value!);
  }

  /** Ends every open span (the runtime is stopping): each run continues its trace at the next start. */
  suspendAll(ts: number): void {
    for (const run of this.#runs.values())
      this.#close(run, ts, { 'snotra.run.suspended': true }, { 'snotra.tool.suspended': true });
    this.#runs.clear();
  }

  #modelAttrs(agentId: string): Record<string, string> {
    const model = this.deps.modelOf(agentId);
    if (model === null) return { 'gen_ai.operation.name': 'chat' };
    return {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': model.provider,
      ...(model.model !== null ? { 'gen_ai.request.model': model.model } : {}),
    };
  }

  #open(e: RunFeedEventHeader, parent: Context, attrs: Record<string, string>, resumed: boolean): RunSpans {
    const span = this.deps.tracer.startSpan(
      this.#text(`invoke_agent ${e.agentId}`),
      {
        kind: SpanKind.INTERNAL,
        startTime: e.ts,
        attributes: this.#attrs({ ...attrs, ...(resumed ? { 'snotra.run.resumed': true } : {}) }),
      },
      parent,
    );
    const run: RunSpans = {
      span,
      ctx: trace.setSpan(parent, span),
      agentId: e.agentId,
      chatStart: e.ts,
      chat: null,
      tools: new Map(),
    };
    this.#runs.set(e.runId, run);
    return run;
  }

  /** The context a sub-agent's run starts under: its parent's `spawn_agent` call, else its parent run. */
  #parentContext(runId: string, parentRunId: string | null): Context {
    if (parentRunId === null) {
      const arrived = this.#arrived.get(runId);
      this.#arrived.delete(runId);
      return arrived === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, arrived);
    }
    const parent = this.#runs.get(parentRunId);
    if (parent !== undefined) {
      const call = parent.tools.get(runId.slice(parentRunId.length + 1));
      return call !== undefined ? trace.setSpan(parent.ctx, call.span) : parent.ctx;
    }
    const stored = this.deps.loadTrace(parentRunId);
    const remote = stored === null ? null : fromTraceparent(stored.traceparent);
    return remote === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, remote);
  }

  #start(e: Extract<RunFeedEvent, { type: 'run.started' }>): void {
    const attrs: Record<string, string> = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': e.agentId,
      'gen_ai.conversation.id': e.sessionId,
      'snotra.run.id': e.runId,
      'snotra.surface': e.surface,
      'snotra.interaction': e.interaction,
      ...(e.taskId !== null ? { 'snotra.task.id': e.taskId } : {}),
      ...(e.parentRunId !== null ? { 'snotra.run.parent_id': e.parentRunId } : {}),
    };
    const run = this.#open(e, this.#parentContext(e.runId, e.parentRunId), attrs, false);
    this.deps.saveTrace(e.runId, toTraceparent(run.span.spanContext()), attrs);
    this.deps.metrics.runsStarted.add(1, this.#attrs({ 'gen_ai.agent.name': e.agentId }));
  }

  /** The run's spans here; a run first seen now (resumed after a restart) continues its stored trace. */
  #run(e: RunFeedEventHeader): RunSpans {
    const known = this.#runs.get(e.runId);
    if (known !== undefined) return known;
    const stored = this.deps.loadTrace(e.runId);
    const remote = stored === null ? null : fromTraceparent(stored.traceparent);
    const parent =
      remote !== null
        ? trace.setSpanContext(ROOT_CONTEXT, remote)
        : this.#parentContext(e.runId, e.parentRunId);
    // A context that came in a message's headers has no attributes: the run's own fill in.
    const attrs = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': e.agentId,
      'snotra.run.id': e.runId,
      ...stored?.attrs,
    };
    return this.#open(e, parent, attrs, true);
  }

  #chat(run: RunSpans, ts: number): Span {
    if (run.chat !== null) return run.chat;
    const attrs = this.#modelAttrs(run.agentId);
    const name =
      attrs['gen_ai.request.model'] !== undefined ? `chat ${attrs['gen_ai.request.model']}` : 'chat';
    run.chat = this.deps.tracer.startSpan(
      this.#text(name),
      { kind: SpanKind.CLIENT, startTime: Math.min(run.chatStart, ts), attributes: this.#attrs(attrs) },
      run.ctx,
    );
    return run.chat;
  }

  #endChat(run: RunSpans, ts: number): void {
    run.chat?.end(ts);
    run.chat = null;
  }

  #toolSpan(run: RunSpans, callId: string, tool: string, ts: number): ToolSpan {
    const span = this.deps.tracer.startSpan(
      this.#text(`execute_tool ${tool}`),
      {
        kind: SpanKind.INTERNAL,
        startTime: ts,
        attributes: this.#attrs({
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool,
          'gen_ai.tool.call.id': callId,
        }),
      },
      run.ctx,
    );
    const entry = { span, start: ts, tool };
    run.tools.set(callId, entry);
    return entry;
  }

  #proposed(e: Extract<RunFeedEvent, { type: 'tool.proposed' }>): void {
    const run = this.#run(e);
    // The step that proposed it is over (a step with no text nor usage still gets its span).
    this.#chat(run, e.ts);
    this.#endChat(run, e.ts);
    const { span } = this.#toolSpan(run, e.callId, e.tool, e.ts);
    if (this.deps.captureContent)
      span.setAttribute('gen_ai.tool.call.arguments', redactedJson(this.deps.redactor, e.args));
  }

  #resolved(e: Extract<RunFeedEvent, { type: 'approval.resolved' }>): void {
    const run = this.#run(e);
    const record = this.deps.approval(e.approvalId);
    const start = record?.createdAt ?? e.ts;
    const call = e.callId === null ? undefined : run.tools.get(e.callId);
    const wait = this.deps.tracer.startSpan(
      'await_approval',
      {
        kind: SpanKind.INTERNAL,
        startTime: Math.min(start, e.ts),
        attributes: this.#attrs({
          'snotra.approval.id': e.approvalId,
          'snotra.approval.kind': record?.kind,
          'snotra.approval.decision': e.decision,
          'snotra.approval.decided_by': e.by,
          'snotra.approval.surface': record?.decidedSurface,
          'gen_ai.tool.call.id': e.callId,
        }),
      },
      call !== undefined ? trace.setSpan(run.ctx, call.span) : run.ctx,
    );
    wait.end(e.ts);
    this.deps.metrics.approvalWait.record(seconds(e.ts - start), { 'snotra.approval.decision': e.decision });
    // The call's own span did not survive the restart: its approved (or refused) part gets one.
    if (call === undefined && e.callId !== null && record !== null && record.kind !== 'budget') {
      const resumed = this.#toolSpan(run, e.callId, record.tool, e.ts);
      resumed.span.setAttributes(
        this.#attrs({
          'snotra.policy.decision': 'approval-required',
          'snotra.policy.reason': record.reason,
          'snotra.policy.rule': record.ruleId,
          'snotra.policy.human_required': true,
          'snotra.tool.resumed': true,
        }),
      );
    }
    run.chatStart = e.ts;
  }

  #toolEnded(e: Extract<RunFeedEvent, { type: 'tool.completed' | 'tool.denied' }>): void {
    const run = this.#run(e);
    const entry = run.tools.get(e.callId) ?? this.#toolSpan(run, e.callId, e.tool, e.ts);
    run.tools.delete(e.callId);
    if (e.type === 'tool.denied') {
      entry.span.setAttributes(
        this.#attrs({ 'snotra.tool.denied': true, 'snotra.tool.denied_reason': e.reason }),
      );
    } else {
      if (!e.ok) entry.span.setStatus({ code: SpanStatusCode.ERROR, message: 'tool_error' });
      if (this.deps.captureContent)
        entry.span.setAttribute('gen_ai.tool.call.result', this.deps.redactor.redactString(e.content));
      this.deps.metrics.toolDuration.record(
        seconds(e.ts - entry.start),
        this.#attrs({ 'gen_ai.tool.name': entry.tool, 'snotra.tool.ok': e.ok }),
      );
    }
    entry.span.end(e.ts);
    run.chatStart = e.ts;
  }

  #close(
    run: RunSpans,
    ts: number,
    attrs: Record<string, string | boolean>,
    toolAttrs: Record<string, string | boolean>,
  ): void {
    this.#endChat(run, ts);
    for (const t of run.tools.values()) {
      t.span.setAttributes(this.#attrs(toolAttrs));
      t.span.end(ts);
    }
    run.tools.clear();
    run.span.setAttributes(this.#attrs(attrs));
    run.span.end(ts);
  }
}
