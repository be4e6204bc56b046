import type { ModelStepOutput, ModelUsage, ProposedCall } from '../../machines/run/types.ts';
import { ModelErrorCode, ModelProviderError } from './errors.ts';
import { streamWithRetry } from './http.ts';
import { MODEL_LIMITS } from './limits.ts';
import { callIdFor, type ModelProvider, type ModelStepRequest } from './provider.ts';
import {
  endpoint,
  httpError,
  providerMessage,
  requestHeaders,
  retryPolicy,
  serverLabel,
  type HttpModelSettings,
} from './settings.ts';
import type { SseProgress } from './sse.ts';
import { WireNames } from './tool-schemas.ts';
import { readAnswer, type AnswerAccumulator } from './read-answer.ts';
import { toTurns } from './transcript.ts';
import { UsageTally } from './usage.ts';

type Json = Record<string, unknown>;

/** The `anthropic-version` header sent with every request. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** `max_tokens` when the config sets none (the Messages API requires one). */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

function protocol(message: string): ModelProviderError {
  return new ModelProviderError(ModelErrorCode.protocol, `${message}; the step was discarded`);
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The Messages API `messages` of a transcript (consecutive user-side turns merged). */
export function anthropicMessages(request: ModelStepRequest, wire: WireNames): Json[] {
  const messages: { role: 'user' | 'assistant'; content: Json[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Json[]) => {
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const turn of toTurns(request.transcript)) {
    // The API refuses empty or whitespace-only text blocks.
    if (turn.kind === 'user')
      push('user', [{ type: 'text', text: turn.text.trim() === '' ? '(empty message)' : turn.text }]);
    else if (turn.kind === 'assistant') {
      const blocks: Json[] = turn.text.trim() === '' ? [] : [{ type: 'text', text: turn.text }];
      for (const c of turn.calls) {
        // Arguments that were not a JSON object (already denied as invalid) are echoed as an empty input.
        blocks.push({
          type: 'tool_use',
          id: c.id,
          name: wire.toWire(c.tool),
          input: isObject(c.args) ? c.args : {},
        });
      }
      push('assistant', blocks.length > 0 ? blocks : [{ type: 'text', text: '(no answer)' }]);
    } else {
      push(
        'user',
        turn.results.map((r) => ({
          type: 'tool_result',
          tool_use_id: r.callId,
          content: r.text,
          ...(r.isError ? { is_error: true } : {}),
        })),
      );
    }
  }
  return messages;
}

/** The request body of one step. */
export function anthropicRequestBody(
  settings: HttpModelSettings,
  request: ModelStepRequest,
  wire: WireNames,
): Json {
  const tools = request.tools ?? [];
  return {
    model: settings.model,
    max_tokens: settings.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    ...(request.system !== undefined && request.system !== '' ? { system: request.system } : {}),
    messages: anthropicMessages(request, wire),
    stream: true,
    ...(tools.length > 0
      ? {
          tools: tools.map((t) => ({
            name: wire.toWire(t.name),
            description: t.description,
            input_schema: t.parameters,
          })),
        }
      : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
  };
}

interface Block {
  readonly kind: 'text' | 'tool_use' | 'other';
  readonly name: string;
  json: string;
  /** The `input` of `content_block_start`, used when no `input_json_delta` arrives. */
  readonly initial: unknown;
}

/** Accumulates one streamed Messages API response into a step answer. */
class MessageStream implements AnswerAccumulator {
  constructor(private readonly onText?: (delta: string) => void) {}
  text = '';
  stop: string | null = null;
  done = false;
  readonly #blocks = new Map<number, Block>();
  #toolUses = 0;
  readonly #tally = new UsageTally();

  get usage(): ModelUsage | undefined {
    return this.#tally.usage;
  }

  get responseModel(): string | undefined {
    return this.#tally.responseModel;
  }

  sse(event: string, data: string): void {
    this.event(event, data);
  }

  event(name: string, data: string): void {
    if (this.done) return;
    let ev: Json;
    try {
      ev = JSON.parse(data) as Json;
    } catch {
      throw protocol('the model server sent a stream event that is not JSON');
    }
    if (!isObject(ev)) throw protocol('the model server sent a stream event that is not an object');
    const type = typeof ev.type === 'string' ? ev.type : name;
    switch (type) {
      case 'error':
        throw streamError(ev.error);
      case 'content_block_start': {
        const index = this.#index(ev.index);
        const cb = isObject(ev.content_block) ? ev.content_block : {};
        if (cb.type === 'tool_use') {
          if (++this.#toolUses > MODEL_LIMITS.toolCalls)
            throw protocol(`the model proposed more than ${MODEL_LIMITS.toolCalls} tool calls in one step`);
          const toolName = typeof cb.name === 'string' ? cb.name : '';
          if (toolName.length > MODEL_LIMITS.toolNameChars)
            throw protocol(`a tool name exceeded ${MODEL_LIMITS.toolNameChars} characters`);
          this.#blocks.set(index, { kind: 'tool_use', name: toolName, json: '', initial: cb.input });
        } else if (cb.type === 'text') {
          this.#blocks.set(index, { kind: 'text', name: '', json: '', initial: null });
          if (typeof cb.text === 'string') this.#appendText(cb.text);
        } else {
          // thinking, redacted_thinking and server tool blocks are not part of the answer.
          this.#blocks.set(index, { kind: 'other', name: '', json: '', initial: null });
        }
        return;
      }
      case 'content_block_delta': {
        const block = this.#blocks.get(this.#index(ev.index));
        if (block === undefined)
          throw protocol('the model server sent a delta for a content block it never started');
        const delta = isObject(ev.delta) ? ev.delta : {};
        if (delta.type === 'text_delta' && block.kind === 'text' && typeof delta.text === 'string')
          this.#appendText(delta.text);
        else if (
          delta.type === 'input_json_delta' &&
          block.kind === 'tool_use' &&
          typeof delta.partial_json === 'string'
        ) {
          block.json += delta.partial_json;
          if (block.json.length > MODEL_LIMITS.argumentChars)
            throw protocol(`a tool call's arguments exceeded ${MODEL_LIMITS.argumentChars} characters`);
        }
        return;
      }
      case 'message_start':
        this.#tally.anthropic(isObject(ev.message) ? ev.message.usage : null);
        this.#tally.model(isObject(ev.message) ? ev.message.model : null);
        return;
      case 'message_delta': {
        this.#tally.anthropic(ev.usage);
        const delta = isObject(ev.delta) ? ev.delta : {};
        if (typeof delta.stop_reason === 'string') this.stop = delta.stop_reason;
        return;
      }
      case 'message_stop':
        this.done = true;
        return;
      default:
        // content_block_stop, ping and future events carry nothing we need.
        return;
    }
  }

  #index(raw: unknown): number {
    if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0)
      throw protocol('the model server sent a content block with an invalid index');
    if (!this.#blocks.has(raw) && this.#blocks.size >= MODEL_LIMITS.toolCalls * 4)
      throw protocol('the model server sent too many content blocks');
    return raw;
  }

  #appendText(s: string): void {
    if (this.text.length + s.length > MODEL_LIMITS.textChars)
      throw protocol(`the model's answer exceeded ${MODEL_LIMITS.textChars} characters`);
    this.text += s;
    if (s !== '') this.onText?.(s);
  }

  /** Feeds a whole (non-streamed) message, for servers that ignore `stream: true`. */
  whole(text: string): void {
    let m: Json;
    try {
      m = JSON.parse(text) as Json;
    } catch {
      throw protocol('the model server answered with JSON that does not parse');
    }
    if (!isObject(m)) throw protocol('the model server answered with JSON that is not an object');
    if (m.type === 'error') throw streamError(m.error);
    this.event('', JSON.stringify({ type: 'message_start', message: { usage: m.usage, model: m.model } }));
    const content = Array.isArray(m.content) ? (m.content as unknown[]) : [];
    if (content.length > MODEL_LIMITS.toolCalls * 4)
      throw protocol('the model server sent too many content blocks');
    content.forEach((block, index) =>
      this.event('', JSON.stringify({ type: 'content_block_start', index, content_block: block })),
    );
    this.event('', JSON.stringify({ type: 'message_delta', delta: { stop_reason: m.stop_reason ?? null } }));
    this.event('', JSON.stringify({ type: 'message_stop' }));
  }

  output(step: number, wire: WireNames, label: string): ModelStepOutput {
    if (!this.done || this.stop === null) {
      throw new ModelProviderError(
        ModelErrorCode.truncated,
        `${label}'s stream ended ${this.done ? 'without a stop reason' : 'before message_stop'}; the partial answer was discarded`,
      );
    }
    if (this.stop === 'max_tokens')
      throw new ModelProviderError(
        ModelErrorCode.length,
        'the model stopped at its output token limit (stop_reason "max_tokens"); the partial answer was discarded: raise model.maxTokens or ask for less',
        { providerCode: 'max_tokens' },
      );
    if (this.stop === 'pause_turn')
      throw new ModelProviderError(
        ModelErrorCode.protocol,
        'the model paused its turn (stop_reason "pause_turn"), which the runtime does not continue',
        { providerCode: 'pause_turn' },
      );
    const uses = [...this.#blocks.entries()]
      .filter(([, b]) => b.kind === 'tool_use')
      .sort(([a], [b]) => a - b);
    if (uses.length === 0) return { kind: 'final', text: this.text };
    const calls: ProposedCall[] = uses.map(([, b], i) => {
      if (b.name === '') throw protocol('the model server sent a tool call without a name');
      let args: unknown = isObject(b.initial) ? b.initial : {};
      if (b.json.trim() !== '') {
        try {
          args = JSON.parse(b.json) as unknown;
        } catch {
          args = b.json;
        }
      }
      return { id: callIdFor(step, i), tool: wire.fromWire(b.name), args };
    });
    return this.text === '' ? { kind: 'calls', calls } : { kind: 'calls', calls, text: this.text };
  }
}

function streamError(raw: unknown): ModelProviderError {
  const e = isObject(raw) ? raw : {};
  const code = typeof e.type === 'string' ? e.type : null;
  const message = providerMessage(typeof e.message === 'string' ? e.message : null);
  return new ModelProviderError(
    ModelErrorCode.stream,
    `the model server reported an error in its stream${code ? ` (${code})` : ''}${message ? `: ${message}` : ''}; the partial answer was discarded${code === 'overloaded_error' ? ': the provider is overloaded, try again later' : ''}`,
    { providerCode: code },
  );
}

/**
 * A provider for Anthropic's Messages API: streamed, with the agent's granted tools, `tool_use`
 * blocks assembled from `input_json_delta` fragments, tool results sent back as `tool_result`
 * blocks. `x-api-key` and `anthropic-version` headers; `overloaded_error` (HTTP 529) is retried
 * before the first byte like any 5xx, and fails the step when it arrives inside a stream.
 */
export class AnthropicModel implements ModelProvider {
  constructor(
    private readonly settings: HttpModelSettings,
    private readonly doFetch: typeof fetch = fetch,
  ) {}

  async step(request: ModelStepRequest): Promise<ModelStepOutput> {
    const wire = new WireNames((request.tools ?? []).map((t) => t.name));
    const headers = await requestHeaders(this.settings, request, (key) => ({
      ...(key === null ? {} : { 'x-api-key': key }),
      'anthropic-version': ANTHROPIC_VERSION,
    }));
    headers.accept = 'text/event-stream';
    const label = serverLabel(this.settings);
    const body = JSON.stringify(anthropicRequestBody(this.settings, request, wire));
    return streamWithRetry(
      { url: endpoint(this.settings, '/messages'), headers, body },
      retryPolicy(this.settings, request),
      (status, text, wait) => httpError(label, this.settings, status, text, wait),
      async (stream, progress: SseProgress, contentType) =>
        readAnswer(
          new MessageStream(request.onText),
          { stream, progress, contentType },
          { step: request.step, wire, label, price: this.settings.price },
        ),
      this.doFetch,
    );
  }
}
