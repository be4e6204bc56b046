import type { ModelUsage } from '../../machines/run/types.ts';

/** A token count as a server sends it: a non-negative safe integer, else nothing. */
function count(raw: unknown): number | null {
  return typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0 ? raw : null;
}

/**
 * The token usage of one streamed answer, from whatever parts of it the server reports: an
 * OpenAI-compatible `usage` chunk (`prompt_tokens`, `completion_tokens`, sent with
 * `stream_options.include_usage`), or Anthropic's `message_start` and `message_delta` usage
 * (`input_tokens`, `output_tokens`; the later count of a field wins, as the API's counts are
 * cumulative). A malformed count is ignored, never trusted.
 */
export class UsageTally {
  #input: number | null = null;
  #output: number | null = null;

  /** An OpenAI-compatible `usage` object (or null/absent). */
  openAi(raw: unknown): void {
    if (raw === null || typeof raw !== 'object') return;
    const u = raw as Record<string, unknown>;
    this.#input = count(u.prompt_tokens) ?? this.#input;
    this.#output = count(u.completion_tokens) ?? this.#output;
  }

  /** An Anthropic `usage` object (of `message_start`'s message, or of `message_delta`). */
  anthropic(raw: unknown): void {
    if (raw === null || typeof raw !== 'object') return;
    const u = raw as Record<string, unknown>;
    this.#input = count(u.input_tokens) ?? this.#input;
    this.#output = count(u.output_tokens) ?? this.#output;
  }

  /** The usage seen, or undefined when the server reported none. */
  get usage(): ModelUsage | undefined {
    if (this.#input === null && this.#output === null) return undefined;
    return { inputTokens: this.#input ?? 0, outputTokens: this.#output ?? 0 };
  }
}

/** A model's price: US dollars per million input and output tokens (config `model.price`). */
export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
}

/** `usage` with its cost at `price` (none without a price). */
export function priced(usage: ModelUsage, price: ModelPrice | undefined): ModelUsage {
  if (price === undefined) return usage;
  const costUsd =
    (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
  return { ...usage, costUsd };
}
