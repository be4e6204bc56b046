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
import { argumentsText, parseArguments, toTurns } from './transcript.ts';
import { UsageTally } from './usage.ts';

type Json = Record<string, unknown>;

/** One tool call being accumulated from stream deltas. */
interface PartialCall {
  readonly index: number;
  providerId: string | null;
  name: string;
  args: string;
}

function protocol(message: string): ModelProviderError {
  return new ModelProviderError(ModelErrorCode.protocol, `${message}; the step was discarded`);
}

/** The Chat Completions `messages` of a transcript. */
export function chatMessages(request: ModelStepRequest, wire: WireNames): Json[] {
  const messages: Json[] = [];
  if (request.system !== undefined && request.system !== '')
    messages.push({ role: 'system', content: request.system });
  for (const turn of toTurns(request.transcript)) {
    if (turn.kind === 'user') messages.push({ role: 'user', content: turn.text });
    else if (turn.kind === 'assistant') {
      messages.push({
        role: 'assistant',
        // Always a string: some servers (older Ollama) refuse a null content next to tool_calls.
        content: turn.text,
        ...(turn.calls.length > 0
          ? {
              tool_calls: turn.calls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: wire.toWire(c.tool), arguments: argumentsText(c.args) },
              })),
            }
          : {}),
      });
    } else {
      for (const r of turn.results) messages.push({ role: 'tool', tool_call_id: r.callId, content: r.text });
    }
  }
  return messages;
}

/** The request body of one step. */
export function chatRequestBody(
  settings: HttpModelSettings,
  request: ModelStepRequest,
  wire: WireNames,
): Json {
  const tools = request.tools ?? [];
  return {
    model: settings.model,
    messages: chatMessages(request, wire),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0
      ? {
          tools: tools.map((t) => ({
            type: 'function',
            function: { name: wire.toWire(t.name), description: t.description, parameters: t.parameters },
          })),
        }
      : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.maxTokens !== undefined ? { max_tokens: settings.maxTokens } : {}),
  };
}

/** Accumulates one streamed Chat Completion into a step answer. */
class ChatStream implements AnswerAccumulator {
  constructor(private readonly onText?: (delta: string) => void) {}
  text = '';
  finish: string | null = null;
  done = false;
  readonly #calls = new Map<number, PartialCall>();
  #last: PartialCall | null = null;
  readonly #tally = new UsageTally();

  get usage(): ModelUsage | undefined {
    return this.#tally.usage;
  }

  get responseModel(): string | undefined {
    return this.#tally.responseModel;
  }

  sse(event: string, data: string): void {
    this.event(data, event);
  }

  event(data: string, event: string): void {
    if (this.done) return;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let chunk: Json;
    try {
      chunk = JSON.parse(data) as Json;
    } catch {
      throw protocol('the model server sent a stream event that is not JSON');
    }
    if (chunk === null || typeof chunk !== 'object')
      throw protocol('the model server sent a stream event that is not an object');
    if (chunk.error !== undefined && chunk.error !== null) throw streamError(chunk.error);
    if (event === 'error') throw streamError(chunk);
    this.#tally.openAi(chunk.usage);
    this.#tally.model(chunk.model);
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return; // e.g. the usage chunk
    const choice = (choices.find((c) => (c as Json | null)?.index === 0) ?? choices[0]) as Json | undefined;
    if (choice === undefined || choice === null || typeof choice !== 'object') return;
    const delta = (choice.delta ?? {}) as Json;
    // `content` and `refusal` are the answer; `reasoning`/`reasoning_content` are not shown or kept.
    if (typeof delta.content === 'string') this.#appendText(delta.content);
    if (typeof delta.refusal === 'string') this.#appendText(delta.refusal);
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) this.#toolDelta(tc);
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '')
      this.finish = choice.finish_reason;
  }

  #appendText(s: string): void {
    if (this.text.length + s.length > MODEL_LIMITS.textChars)
      throw protocol(`the model's answer exceeded ${MODEL_LIMITS.textChars} characters`);
    this.text += s;
    if (s !== '') this.onText?.(s);
  }

  /** Feeds a whole (non-streamed) completion, for servers that ignore `stream: true`. */
  whole(text: string): void {
    let c: Json;
    try {
      c = JSON.parse(text) as Json;
    } catch {
      throw protocol('the model server answered with JSON that does not parse');
    }
    if (c === null || typeof c !== 'object')
      throw protocol('the model server answered with JSON that is not an object');
    if (c.error !== undefined && c.error !== null) throw streamError(c.error);
    this.#tally.openAi(c.usage);
    this.#tally.model(c.model);
    const choice = (Array.isArray(c.choices) ? c.choices[0] : undefined) as Json | undefined;
    const msg = (choice?.message ?? {}) as Json;
    const calls = Array.isArray(msg.tool_calls) ? (msg.tool_calls as unknown[]) : [];
    if (calls.length > MODEL_LIMITS.toolCalls)
      throw protocol(`the model proposed more than ${MODEL_LIMITS.toolCalls} tool calls in one step`);
    const delta: Json = {
      content: msg.content,
      refusal: msg.refusal,
      tool_calls: calls.map((t, index) => ({ ...(t as Json), index })),
    };
    this.event(
      JSON.stringify({ choices: [{ index: 0, delta, finish_reason: choice?.finish_reason ?? null }] }),
      '',
    );
    this.event('[DONE]', '');
  }

  #toolDelta(raw: unknown): void {
    if (raw === null || typeof raw !== 'object')
      throw protocol('the model server sent a tool call delta that is not an object');
    const tc = raw as Json;
    const providerId = typeof tc.id === 'string' && tc.id !== '' ? tc.id : null;
    const call = this.#callFor(tc.index, providerId);
    if (call.providerId === null && providerId !== null) call.providerId = providerId;
    const fn = (tc.function ?? {}) as Json;
    if (typeof fn.name === 'string') {
      call.name += fn.name;
      if (call.name.length > MODEL_LIMITS.toolNameChars)
        throw protocol(`a tool name exceeded ${MODEL_LIMITS.toolNameChars} characters`);
    }
    if (typeof fn.arguments === 'string') {
      call.args += fn.arguments;
      if (call.args.length > MODEL_LIMITS.argumentChars)
        throw protocol(`a tool call's arguments exceeded ${MODEL_LIMITS.argumentChars} characters`);
    } else if (fn.arguments !== undefined && fn.arguments !== null && typeof fn.arguments === 'object') {
      // Some servers send the arguments as an object instead of JSON text.
      call.args += JSON.stringify(fn.arguments);
    }
  }

  /** The call a delta belongs to: by `index`; without one, by provider id, else the last call. */
  #callFor(index: unknown, providerId: string | null): PartialCall {
    let key: number;
    if (index === undefined || index === null) {
      const byId =
        providerId === null ? undefined : [...this.#calls.values()].find((c) => c.providerId === providerId);
      if (byId !== undefined) return (this.#last = byId);
      if (providerId === null && this.#last !== null) return this.#last;
      key = this.#calls.size === 0 ? 0 : Math.max(...this.#calls.keys()) + 1;
    } else {
      if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0)
        throw protocol('the model server sent a tool call with an invalid index');
      key = index;
    }
    let call = this.#calls.get(key);
    if (call === undefined) {
      if (this.#calls.size >= MODEL_LIMITS.toolCalls)
        throw protocol(`the model proposed more than ${MODEL_LIMITS.toolCalls} tool calls in one step`);
      call = { index: key, providerId: null, name: '', args: '' };
      this.#calls.set(key, call);
    }
    return (this.#last = call);
  }

  /** The step's answer once the stream ended. */
  output(step: number, wire: WireNames, label: string): ModelStepOutput {
    if (!this.done || this.finish === null) {
      throw new ModelProviderError(
        ModelErrorCode.truncated,
        `${label}'s stream ended ${this.done ? 'without a finish reason' : 'before [DONE]'}; the partial answer was discarded`,
      );
    }
    if (this.finish === 'length')
      throw new ModelProviderError(
        ModelErrorCode.length,
        `the model stopped at its output token limit (finish_reason "length"); the partial answer was discarded: raise model.maxTokens or ask for less`,
        { providerCode: 'length' },
      );
    if (this.finish === 'content_filter')
      throw new ModelProviderError(
        ModelErrorCode.filtered,
        `the provider's content filter stopped the answer (finish_reason "content_filter")`,
        { providerCode: 'content_filter' },
      );
    const partial = [...this.#calls.values()].sort((a, b) => a.index - b.index);
    if (partial.length === 0) return { kind: 'final', text: this.text };
    const calls: ProposedCall[] = partial.map((c, i) => {
      if (c.name === '') throw protocol('the model server sent a tool call without a name');
      return { id: callIdFor(step, i), tool: wire.fromWire(c.name), args: parseArguments(c.args) };
    });
    return this.text === '' ? { kind: 'calls', calls } : { kind: 'calls', calls, text: this.text };
  }
}

function streamError(raw: unknown): ModelProviderError {
  const e = (raw ?? {}) as Json;
  const code =
    typeof e.code === 'string' || typeof e.code === 'number'
      ? String(e.code)
      : typeof e.type === 'string'
        ? e.type
        : null;
  const message = providerMessage(typeof e.message === 'string' ? e.message : null);
  return new ModelProviderError(
    ModelErrorCode.stream,
    `the model server reported an error in its stream${code ? ` (${code})` : ''}${message ? `: ${message}` : ''}; the partial answer was discarded`,
    { providerCode: code },
  );
}

/**
 * A provider for OpenAI's Chat Completions API and the servers that speak it (OpenAI, Ollama's
 * `/v1`, llama.cpp's server with `--jinja`, vLLM, LM Studio): streamed, with the agent's
 * granted tools as functions. Tool-call deltas are accumulated by `index` in a map (bounded),
 * call ids are the runtime's own (`callIdFor`), `refusal` counts as text and reasoning fields
 * are ignored. `length`/`content_filter`, an `error` object after HTTP 200 and a stream ending
 * without `[DONE]` or a finish reason fail the step.
 */
export class OpenAiCompatibleModel implements ModelProvider {
  constructor(
    private readonly settings: HttpModelSettings,
    private readonly doFetch: typeof fetch = fetch,
  ) {}

  async step(request: ModelStepRequest): Promise<ModelStepOutput> {
    const wire = new WireNames((request.tools ?? []).map((t) => t.name));
    const headers = await requestHeaders(this.settings, request, (key): Record<string, string> =>
      key === null ? {} : { authorization: `Bearer ${key}` },
    );
    headers.accept = 'text/event-stream';
    const label = serverLabel(this.settings);
    const body = JSON.stringify(chatRequestBody(this.settings, request, wire));
    return streamWithRetry(
      { url: endpoint(this.settings, '/chat/completions'), headers, body },
      retryPolicy(this.settings, request),
      (status, text, wait) => httpError(label, this.settings, status, text, wait),
      async (stream, progress: SseProgress, contentType) =>
        readAnswer(
          new ChatStream(request.onText),
          { stream, progress, contentType },
          { step: request.step, wire, label, price: this.settings.price },
        ),
      this.doFetch,
    );
  }
}
