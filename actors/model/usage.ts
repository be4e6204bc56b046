import type { ModelUsage } from '../../machines/run/types.ts';

/** A token count as a server sends it: a non-negative safe integer, else nothing. */
function count(raw: unknown): number | null {
  return typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0 ? raw : null;
}

/** A model name as a server reports it: 1-200 printable ASCII characters, else nothing. */
const MODEL_NAME = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;

/**
 * The token usage of one streamed answer, from whatever parts of it the server reports: an
 * OpenAI-compatible `usage` chunk (`prompt_tokens`, `completion_tokens`, sent with
 * `stream_options.include_usage`), or Anthropic's `message_start` and `message_delta` usage
 * (`input_tokens`, `output_tokens`; the later count of a field wins, as the API's counts are
 * cumulative). A malformed count is ignored, never trusted. Also the model the server says
 * answered (`gen_ai.response.model`): the first well-formed name it reports.
 */
export class UsageTally {
  #input: number | null = null;
  #output: number | null = null;
  #model: string | undefined = undefined;

  /** A response's `model` field (OpenAI-compatible chunk or body, Anthropic `message_start.message`). */
  model(raw: unknown): void {
    if (this.#model === undefined && typeof raw === 'string' && MODEL_NAME.test(raw)) this.#model = raw;
  }

  /** The model the server said answered; undefined when it said none (never the requested one). */
  get responseModel(): string | undefined {
    return this.#model;
  }

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
