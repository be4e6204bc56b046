import type { ModelStepOutput, TranscriptEntry } from '../../machines/run/types.ts';
import type { SecretResolver } from '../tools/types.ts';

/** A tool as a model is offered it: the runtime's name, what it does, its arguments' JSON Schema. */
export interface ModelTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** What a model provider is given for one step. `step` is the 0-based model call of the run. */
export interface ModelStepRequest {
  readonly runId: string;
  readonly agentId: string;
  readonly step: number;
  readonly transcript: readonly TranscriptEntry[];
  /**
   * The system prompt: the runtime's preamble (roots, mode, tools) and the agent's
   * `instructions`. Sent as each API expects it (a first `system` message, or a `system` field).
   */
  readonly system?: string;
  /**
   * The agents whose model this step may use when its own agent has none, nearest first (a
   * sub-agent's parent, then its parent): an agent with no `model` uses its parent's.
   */
  readonly inheritFrom?: readonly string[];
  /** Exactly the tools the run's agent is granted (see `modelTools`). */
  readonly tools?: readonly ModelTool[];
  /** Where a provider resolves its API key at request time (registered with the redactor). */
  readonly secrets?: SecretResolver;
  /** Aborted when the runtime stops. */
  readonly signal?: AbortSignal;
  /**
   * Receives the answer's text as it streams in (for a live surface). A step that fails after
   * some text was streamed is still a failure: the text is not part of the run.
   */
  readonly onText?: (delta: string) => void;
}

/**
 * A model provider. A step may be asked again for the same `step` after a restart when the
 * runtime died before the step's answer was recorded, so providers must not assume each call
 * is new. Once a step's answer is recorded (before any tool it proposes is evaluated) it is
 * never asked again.
 */
export interface ModelProvider {
  step(request: ModelStepRequest): Promise<ModelStepOutput>;
}

/**
 * The id a network provider gives the `index`-th call of step `step`: nine letters and digits
 * (`c00003001`), accepted by every tool-calling API (Mistral's included). Provider-sent ids are
 * never used: they may be missing, repeat across steps, or be chosen by a hostile server, and
 * the run keys its ledger and approvals by call id. Stable across restarts because the step's
 * answer is recorded before its calls run.
 */
export function callIdFor(step: number, index: number): string {
  return `c${String(step).padStart(5, '0')}${String(index).padStart(3, '0')}`;
}
