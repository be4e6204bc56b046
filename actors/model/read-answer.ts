import type { ModelStepOutput, ModelUsage } from '../../machines/run/types.ts';
import { assertStreamType, isJsonBody, readWholeBody } from './http.ts';
import { MODEL_LIMITS } from './limits.ts';
import { readSse, type SseProgress } from './sse.ts';
import type { WireNames } from './tool-schemas.ts';
import { priced, type ModelPrice } from './usage.ts';

/** What a provider builds a step's answer with: from SSE events, or from one whole JSON body. */
export interface AnswerAccumulator {
  /** One SSE event (`event` is the SSE event name, '' when none). */
  sse(event: string, data: string): void;
  /** A whole JSON answer (a server that ignored `stream: true`). */
  whole(text: string): void;
  /** The stream said it is over (`[DONE]`, `message_stop`). */
  readonly done: boolean;
  /** The step's answer, or a failure when the stream did not finish properly. */
  output(step: number, wire: WireNames, label: string): ModelStepOutput;
  /** The tokens the server said the answer used, if it said so. */
  readonly usage?: ModelUsage | undefined;
  /** The model the server said answered, if it said so. */
  readonly responseModel?: string | undefined;
}

/**
 * The answer with the accumulator's usage (priced when the model has a price) and the model the
 * server said answered, each when there is one.
 */
function withUsage(
  acc: AnswerAccumulator,
  output: ModelStepOutput,
  price: ModelPrice | undefined,
): ModelStepOutput {
  return {
    ...output,
    ...(acc.usage !== undefined ? { usage: priced(acc.usage, price) } : {}),
    ...(acc.responseModel !== undefined ? { responseModel: acc.responseModel } : {}),
  };
}

/**
 * Reads one answer, whichever form the server chose (a refused content type fails first), within
 * the response and line limits, until the accumulator is done or the body ends.
 */
export async function readAnswer(
  acc: AnswerAccumulator,
  body: { stream: ReadableStream<Uint8Array>; progress: SseProgress; contentType: string },
  at: { step: number; wire: WireNames; label: string; price?: ModelPrice | undefined },
): Promise<ModelStepOutput> {
  assertStreamType(body.contentType, at.label);
  if (isJsonBody(body.contentType)) {
    acc.whole(await readWholeBody(body.stream, MODEL_LIMITS.responseBytes, body.progress));
    return withUsage(acc, acc.output(at.step, at.wire, at.label), at.price);
  }
  for await (const ev of readSse(
    body.stream,
    { maxBytes: MODEL_LIMITS.responseBytes, maxLineChars: MODEL_LIMITS.lineChars },
    body.progress,
  )) {
    acc.sse(ev.event, ev.data);
    if (acc.done) break;
  }
  return withUsage(acc, acc.output(at.step, at.wire, at.label), at.price);
}
