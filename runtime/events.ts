import type { Decision, RuleRef, Target } from '../policy/decision.ts';
import type { Interaction, ToolRisk } from '../policy/risk.ts';
import type { ApprovalPreview } from './approvals/preview.ts';

export type { ApprovalPreview };

/**
 * The live feed of what runs do, as surfaces show it: `snotra run --json` writes these as JSON
 * lines, and the sidecar's SSE/WebSocket streams carry the same types. Every field is redacted
 * (the store's redactor, with every resolved secret registered) before an event is built, and
 * tool content is capped; an event never holds more than the audit log would.
 */
export type RunFeedEvent = RunFeedEventBody & RunFeedEventHeader;

/** Fields every event has. `runId` is the run the event is about (a sub-agent's own run id). */
export interface RunFeedEventHeader {
  readonly runId: string;
  /** Milliseconds since the epoch (the runtime's clock). */
  readonly ts: number;
  readonly agentId: string;
  /** The run that spawned this one, for sub-agents; null for a top-level run. */
  readonly parentRunId: string | null;
}

/** What the human may answer to an approval request, besides once and deny. */
export interface ApprovalOptions {
  /**
   * "For this session" is offered (policy/approvals.ts): never for always-ask tools or
   * unanalyzable commands; for exec only the exact command.
   */
  readonly session: boolean;
  /**
   * "Always for this exact target" is offered (invariant 7): only `external` tools with a target
   * argument, in a run owned by a task.
   */
  readonly standing: boolean;
}

/** The event bodies, by `type`. */
export type RunFeedEventBody =
  | {
      readonly type: 'run.started';
      readonly sessionId: string;
      readonly taskId: string | null;
      readonly interaction: Interaction;
      readonly surface: string;
    }
  /** Text the model wrote: the whole step's text, once the step has answered. */
  | { readonly type: 'model.text'; readonly delta: string }
  /**
   * Text as the model writes it, from a streaming provider, released through the redaction
   * hold-back buffer (runtime/streaming/hold-back.ts): the deltas of a step, joined, are its
   * `model.text`; no delta, nor any run of them, holds a registered secret.
   */
  | { readonly type: 'model.delta'; readonly delta: string }
  /** The tokens one model call used (`step`: the run's 0-based model call), as its provider said. */
  | {
      readonly type: 'model.usage';
      readonly step: number;
      readonly inputTokens: number;
      readonly outputTokens: number;
      /** US dollars, when the model has a price in config. */
      readonly costUsd?: number;
      /** The model the provider's server said answered, when it said (redacted). */
      readonly responseModel?: string;
    }
  | { readonly type: 'tool.proposed'; readonly callId: string; readonly tool: string; readonly args: unknown }
  | {
      readonly type: 'tool.decided';
      readonly callId: string;
      readonly tool: string;
      readonly decision: Decision;
    }
  | {
      readonly type: 'approval.requested';
      readonly approvalId: string;
      readonly callId: string;
      readonly tool: string;
      readonly risk: ToolRisk;
      readonly reason: string;
      readonly rule: RuleRef;
      readonly targets: readonly Target[];
      readonly args: unknown;
      readonly interaction: Interaction;
      readonly sessionId: string;
      readonly expiresAt: number;
      readonly options: ApprovalOptions;
      /** The exact command, or the diff of a file write/edit; null for other tools. */
      readonly preview: ApprovalPreview | null;
    }
  | {
      readonly type: 'approval.resolved';
      readonly approvalId: string;
      readonly callId: string | null;
      readonly decision: 'approved' | 'denied' | 'expired';
      readonly by: string | null;
      readonly reason: string | null;
    }
  | {
      readonly type: 'tool.completed';
      readonly callId: string;
      readonly tool: string;
      readonly ok: boolean;
      /** What the model saw, capped at FEED_CONTENT_MAX characters. */
      readonly content: string;
      readonly truncated: boolean;
    }
  | {
      readonly type: 'tool.denied';
      readonly callId: string;
      readonly tool: string;
      readonly reason: string;
      readonly message: string;
    }
  | {
      /** The run went past a budget and waits for a human to extend it (an Inbox item of kind `budget`). */
      readonly type: 'budget.requested';
      readonly approvalId: string;
      /** The budget it went past: `modelCalls`, `toolCalls`, `tokens`, `costUsd` or `wallTimeMs`. */
      readonly dimension: string;
      readonly used: number;
      readonly limit: number;
      /** How much approving it adds, once ("continue with +N?"). */
      readonly grant: number;
      /** The reason code the run ends with when it is denied (`budget_tokens`, …). */
      readonly reason: string;
      readonly interaction: Interaction;
      readonly sessionId: string;
      readonly expiresAt: number;
    }
  | { readonly type: 'run.parked'; readonly approvalId: string }
  | {
      readonly type: 'run.completed';
      readonly outcome: 'completed';
      readonly reason: string;
      readonly text: string;
    }
  | {
      readonly type: 'run.failed';
      readonly outcome: 'failed' | 'denied';
      readonly reason: string;
      readonly message: string;
    };

/** Every event type, for exhaustive switches and validation of a feed. */
export const RUN_FEED_EVENT_TYPES = [
  'run.started',
  'model.text',
  'model.delta',
  'model.usage',
  'tool.proposed',
  'tool.decided',
  'approval.requested',
  'approval.resolved',
  'tool.completed',
  'tool.denied',
  'budget.requested',
  'run.parked',
  'run.completed',
  'run.failed',
] as const satisfies readonly RunFeedEvent['type'][];

/** The longest tool content an event carries (the model may have seen more). */
export const FEED_CONTENT_MAX = 2000;

/** A listener of the feed; it must not throw (a throwing listener is logged and skipped). */
export type RunFeedListener = (event: RunFeedEvent) => void;
