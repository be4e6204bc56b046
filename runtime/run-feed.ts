import type { Logger } from 'pino';
import type { RunReporter } from '../actors/run/effects.ts';
import type { Decision } from '../policy/decision.ts';
import type {
  ModelStepOutput,
  Observation,
  ProposedCall,
  RunContext,
  RunInput,
  RunOutcome,
} from '../machines/run/types.ts';
import type { ApprovalRecord, Redactor } from '../store/index.ts';
import { approvalDetails, type ApprovalDetailsDeps } from './approvals/approval-details.ts';
import { HoldBackBuffer } from './streaming/hold-back.ts';
import {
  FEED_CONTENT_MAX,
  type RunFeedEvent,
  type RunFeedEventBody,
  type RunFeedListener,
} from './events.ts';

/** The run a feed event is about. */
type RunRef = Pick<RunInput, 'runId' | 'agentId' | 'parentRunId'>;

/**
 * The model a provider's server said answered one step (redacted), whether or not it reported
 * token usage: what telemetry names the step's `chat` span with (`gen_ai.response.model`). Not a
 * feed event: surfaces see it on `model.usage`.
 */
export interface StepModel extends RunRef {
  readonly ts: number;
  /** The run's 0-based model call. */
  readonly step: number;
  readonly responseModel: string;
}

/** What a run's end means to a person, by outcome reason (RunOutcome.reason). */
const OUTCOME_TEXT: Readonly<Record<string, string>> = {
  final_answer: 'the model gave its final answer',
  model_error: 'the model step failed',
  policy_error: 'the policy could not decide a call',
  approval_store_error: 'the approval request could not be recorded',
  approval_denied: 'a human denied a call',
  approval_expired: 'an approval request expired without a decision',
  repeated_denied_call: 'the model proposed the same denied call again',
  budget_model_calls: 'the run used all of its model calls',
  budget_tool_calls: 'the run used all of its tool calls',
  budget_wall_time: 'the run ran out of wall time',
  budget_tokens: 'the run used all of its tokens',
  budget_cost: 'the run used all of its cost budget',
};

const MESSAGE_MAX = 1000;

function cap(text: string, max: number): { text: string; truncated: boolean } {
  return text.length <= max ? { text, truncated: false } : { text: text.slice(0, max), truncated: true };
}

/**
 * The runtime's live feed of run events (runtime/events.ts). It hears the run effects (as their
 * RunReporter) and the runtime's own run, approval and park points, redacts every value with
 * the store's redactor, and hands each event to every listener. With no listener it does no work.
 */
export class RunFeed implements RunReporter {
  readonly #listeners = new Set<RunFeedListener>();
  readonly #stepModels = new Set<(e: StepModel) => void>();
  /** The last model error of each run (redacted), for the message of its `run.failed`. */

  readonly #redactor: Redactor;
  /**
   * Each streaming run's hold-back buffer for its current step. Kept with or without listeners,
   * so a listener that joins mid-step never gets the tail of a secret whose head it missed.
   */
  readonly #streams = new Map<string, HoldBackBuffer>();

  constructor(
    /** What approval details are built from (the redactor redacts every other value too). */
    private readonly details: ApprovalDetailsDeps,
    private readonly clock: () => number,
    private readonly logger: Logger,
  ) {
    this.#redactor = details.redactor;
  }

  /** Adds a listener; returns its removal. */
  on(listener: RunFeedListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Hears the model each step's server named (see {@link StepModel}); returns the removal. */
  onStepModel(listener: (e: StepModel) => void): () => void {
    this.#stepModels.add(listener);
    return () => this.#stepModels.delete(listener);
  }

  #stepModel(ctx: RunContext, responseModel: string): void {
    const e: StepModel = {
      runId: ctx.runId,
      agentId: ctx.agentId,
      parentRunId: ctx.parentRunId,
      ts: this.clock(),
      step: ctx.steps,
      responseModel: this.#redactor.redactString(responseModel),
    };
    for (const l of [...this.#stepModels]) {
      try {
        l(e);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'a step model listener failed');
      }
    }
  }

  /** Sends one event (already redacted) to every listener. */
  emit(run: RunRef, body: RunFeedEventBody): void {
    if (this.#listeners.size === 0) return;
    const event = {
      ...body,
      runId: run.runId,
      ts: this.clock(),
      agentId: run.agentId,
      parentRunId: run.parentRunId,
    } as RunFeedEvent;
    for (const l of [...this.#listeners]) {
      try {
        l(event);
      } catch (err) {
        this.logger.error({ type: event.type, err: (err as Error).message }, 'a run feed listener failed');
      }
    }
  }

  get #quiet(): boolean {
    return this.#listeners.size === 0;
  }

  #text(value: string, max: number): string {
    return cap(this.#redactor.redactString(value), max).text;
  }

  /** A new run started (`run.started`), before its first step. */
  started(ctx: RunInput): void {
    this.emit(ctx, {
      type: 'run.started',
      sessionId: ctx.sessionId,
      taskId: ctx.taskId,
      interaction: ctx.interaction,
      surface: ctx.surface,
    });
  }

  /** A piece of a step's text (`model.delta`), released once no secret can straddle it. */
  modelDelta(ctx: RunContext, delta: string): void {
    let buffer = this.#streams.get(ctx.runId);
    if (buffer === undefined) this.#streams.set(ctx.runId, (buffer = new HoldBackBuffer(this.#redactor)));
    const out = buffer.push(delta);
    if (out !== '') this.emit(ctx, { type: 'model.delta', delta: out });
  }

  modelOutput(ctx: RunContext, output: ModelStepOutput): void {
    const buffer = this.#streams.get(ctx.runId);
    if (buffer !== undefined) {
      this.#streams.delete(ctx.runId);
      const rest = buffer.flush();
      if (rest !== '') this.emit(ctx, { type: 'model.delta', delta: rest });
    }
    if (output.responseModel !== undefined && this.#stepModels.size > 0)
      this.#stepModel(ctx, output.responseModel);
    if (this.#quiet) return;
    if (output.text !== undefined && output.text.length > 0)
      this.emit(ctx, { type: 'model.text', delta: this.#redactor.redactString(output.text) });
    if (output.usage !== undefined)
      this.emit(ctx, {
        type: 'model.usage',
        step: ctx.steps,
        inputTokens: output.usage.inputTokens,
        outputTokens: output.usage.outputTokens,
        ...(output.usage.costUsd !== undefined ? { costUsd: output.usage.costUsd } : {}),
        ...(output.responseModel !== undefined
          ? { responseModel: this.#redactor.redactString(output.responseModel) }
          : {}),
      });
  }

  proposed(ctx: RunContext, call: ProposedCall): void {
    if (this.#quiet) return;
    this.emit(ctx, {
      type: 'tool.proposed',
      callId: call.id,
      tool: call.tool,
      args: this.#redactor.redact(call.args ?? null),
    });
  }

  decided(ctx: RunContext, call: ProposedCall, decision: Decision): void {
    if (this.#quiet) return;
    this.emit(ctx, {
      type: 'tool.decided',
      callId: call.id,
      tool: call.tool,
      decision: this.#redactor.redact(decision) as Decision,
    });
  }

  observed(ctx: RunContext, o: Observation): void {
    if (this.#quiet) return;
    if (o.kind === 'tool.denied') {
      this.emit(ctx, {
        type: 'tool.denied',
        callId: o.callId,
        tool: o.tool,
        reason: o.reason,
        message: this.#text(o.message, MESSAGE_MAX),
      });
      return;
    }
    const raw =
      o.kind === 'tool.result'
        ? typeof o.content === 'string'
          ? o.content
          : (JSON.stringify(o.content) ?? '')
        : o.message;
    const { text, truncated } = cap(this.#redactor.redactString(raw), FEED_CONTENT_MAX);
    this.emit(ctx, {
      type: 'tool.completed',
      callId: o.callId,
      tool: o.tool,
      ok: o.kind === 'tool.result',
      content: text,
      truncated,
    });
  }

  /** An approval request was opened (`approval.requested`), from its stored (redacted) record. */
  approvalRequested(approval: ApprovalRecord, ctx: RunContext): void {
    if (this.#quiet) return;
    if (approval.kind === 'budget') {
      const request = ctx.budgetRequest;
      if (request == null) return;
      this.emit(ctx, {
        type: 'budget.requested',
        approvalId: approval.id,
        ...request,
        reason: approval.reason,
        interaction: ctx.interaction,
        sessionId: ctx.sessionId,
        expiresAt: approval.expiresAt,
      });
      return;
    }
    const call = ctx.calls[ctx.cursor];
    const details = approvalDetails(this.details, ctx);
    if (call === undefined || details === null) return;
    this.emit(ctx, {
      type: 'approval.requested',
      approvalId: approval.id,
      callId: call.id,
      tool: approval.tool,
      risk: approval.risk,
      reason: approval.reason,
      rule: details.rule,
      targets: details.targets,
      args: approval.args,
      interaction: ctx.interaction,
      sessionId: ctx.sessionId,
      expiresAt: approval.expiresAt,
      options: details.options,
      preview: details.preview,
    });
  }

  /** A decision or an expiry reached an approval (`approval.resolved`). */
  approvalResolved(approval: ApprovalRecord): void {
    if (this.#quiet || approval.status === 'pending' || approval.runId === null) return;
    const checkpoint = approval.resumeCheckpoint as { callId?: unknown } | null;
    this.emit(
      { runId: approval.runId, agentId: approval.agentId, parentRunId: approval.parentRunId },
      {
        type: 'approval.resolved',
        approvalId: approval.id,
        callId: typeof checkpoint?.callId === 'string' ? checkpoint.callId : null,
        decision: approval.status,
        by: approval.decidedBy,
        reason: approval.decisionReason,
      },
    );
  }

  /** An unattended run parked on an approval (`run.parked`). */
  parked(ctx: RunContext, approvalId: string): void {
    this.emit(ctx, { type: 'run.parked', approvalId });
  }

  /** A run ended (`run.completed` or `run.failed`). */
  ended(ctx: RunContext, outcome: RunOutcome): void {
    // A step that failed after streaming some text: what it held back is not part of the run.
    this.#streams.delete(ctx.runId);
    if (outcome.status === 'completed') {
      this.emit(ctx, {
        type: 'run.completed',
        outcome: 'completed',
        reason: outcome.reason,
        text: this.#redactor.redactString(outcome.text ?? ''),
      });
      return;
    }
    const known = OUTCOME_TEXT[outcome.reason] ?? outcome.reason;
    this.emit(ctx, {
      type: 'run.failed',
      outcome: outcome.status,
      reason: outcome.reason,
      // The run's own message (redacted where it was made) says what went wrong; else the reason in words.
      message: outcome.message !== undefined ? this.#text(outcome.message, MESSAGE_MAX) : known,
    });
  }
}
