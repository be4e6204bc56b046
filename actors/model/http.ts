import { ModelErrorCode, ModelProviderError } from './errors.ts';
import { MODEL_LIMITS } from './limits.ts';
import type { SseProgress } from './sse.ts';

/** One request of a provider: everything but the retry loop. */
export interface ModelHttpRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** How a provider retries and times out. */
export interface RetryPolicy {
  /** Retries after the first attempt (0: one attempt). */
  readonly maxRetries: number;
  /** Longest silence (ms) before the response headers or between two chunks of the stream. */
  readonly timeoutMs: number;
  /** First backoff (ms) when the server gives no `Retry-After`; doubles per attempt. */
  readonly baseDelayMs: number;
  readonly signal?: AbortSignal;
}

/** Turns an HTTP error status and its (bounded) body into the step's error. */
export type DescribeHttpError = (
  status: number,
  body: string,
  retryAfterMs: number | null,
) => ModelProviderError;

/** HTTP statuses worth another attempt: timeouts, conflicts, rate limits and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as
 * an HTTP date. Null when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get('retry-after');
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const date = Date.parse(v);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function aborted(): ModelProviderError {
  return new ModelProviderError(
    ModelErrorCode.aborted,
    'the model step was stopped (the runtime is shutting down)',
  );
}

async function readBounded(res: Response, max: number): Promise<string> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // An error body that breaks off is still described by its status.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, max));
}

/** Whether a 200 answer is one JSON document (a server that ignored `stream: true`) rather than SSE. */
export function isJsonBody(contentType: string): boolean {
  return /^application\/(.+\+)?json\b/i.test(contentType.trim());
}

/**
 * Refuses a 200 answer that is neither an event stream nor JSON (e.g. a proxy's login page),
 * naming its content type instead of reporting a truncated stream. A missing type is read as SSE.
 */
export function assertStreamType(contentType: string, label: string): void {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === '' || type === 'text/event-stream' || isJsonBody(type)) return;
  throw new ModelProviderError(
    ModelErrorCode.protocol,
    `${label} answered with ${JSON.stringify(type.slice(0, 100))} instead of an event stream: check model.baseUrl (the API root, e.g. ending in /v1)`,
  );
}

/**
 * Reads a whole (non-streamed) body up to `max` bytes, counting into `progress`; a longer body
 * fails with `model_protocol_error`.
 */
export async function readWholeBody(
  body: ReadableStream<Uint8Array>,
  max: number,
  progress: SseProgress,
): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      progress.bytes += value.byteLength;
      progress.onChunk?.();
      if (progress.bytes > max)
        throw new ModelProviderError(
          ModelErrorCode.protocol,
          `the model server's response exceeded ${max} bytes; the step was discarded`,
        );
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * Sends `request` and hands the streamed body to `consume`, retrying with backoff on connection
 * errors and on 408, 409, 429 and 5xx (honouring `Retry-After`, up to `MODEL_LIMITS.retryAfterMs`)
 * — only while no byte of a response body has been consumed: once the stream has started, any
 * failure fails the step and whatever was read is discarded whole. Redirects are refused, so
 * the key is never sent to another address.
 */
export async function streamWithRetry<T>(
  request: ModelHttpRequest,
  policy: RetryPolicy,
  describe: DescribeHttpError,
  consume: (body: ReadableStream<Uint8Array>, progress: SseProgress, contentType: string) => Promise<T>,
  doFetch: typeof fetch = fetch,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= policy.maxRetries;
    let failure: ModelProviderError;
    const controller = new AbortController();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, policy.timeoutMs);
    };
    const onAbort = () => controller.abort();
    policy.signal?.addEventListener('abort', onAbort, { once: true });
    const progress: SseProgress = { bytes: 0, onChunk: arm };
    try {
      if (policy.signal?.aborted) throw aborted();
      arm();
      let res: Response;
      try {
        res = await doFetch(request.url, {
          method: 'POST',
          headers: request.headers,
          body: request.body,
          signal: controller.signal,
          redirect: 'error',
        });
      } catch (err) {
        throw connectionError(err, timedOut, policy);
      }
      if (!res.ok) {
        const wait = retryAfterMs(res.headers);
        const body = await readBounded(res, MODEL_LIMITS.errorBodyBytes);
        throw describe(res.status, body, wait);
      }
      if (res.body === null) {
        throw new ModelProviderError(
          ModelErrorCode.truncated,
          'the model server answered with an empty body',
          {
            retryable: true,
          },
        );
      }
      try {
        return await consume(res.body, progress, res.headers.get('content-type') ?? '');
      } catch (err) {
        if (err instanceof ModelProviderError) {
          if (timedOut) throw connectionError(err, true, policy, progress.bytes === 0);
          throw err;
        }
        // A broken connection mid-stream: retryable only when nothing was read yet.
        throw connectionError(err, timedOut, policy, progress.bytes === 0);
      }
    } catch (err) {
      if (policy.signal?.aborted) throw aborted();
      if (!(err instanceof ModelProviderError)) throw err;
      failure = err;
    } finally {
      clearTimeout(timer);
      policy.signal?.removeEventListener('abort', onAbort);
    }
    // Once a byte of the answer arrived, nothing is retried: the partial answer is discarded whole.
    if (!failure.retryable || last || progress.bytes > 0) throw failure;
    if (failure.retryAfterMs !== null && failure.retryAfterMs > MODEL_LIMITS.retryAfterMs) {
      throw new ModelProviderError(
        failure.code,
        `${failure.message}; the server asked to wait ${Math.ceil(failure.retryAfterMs / 1000)} s, longer than the ${MODEL_LIMITS.retryAfterMs / 1000} s the runtime waits`,
        { status: failure.status, providerCode: failure.providerCode },
      );
    }
    const backoff = Math.min(MODEL_LIMITS.backoffMaxMs, policy.baseDelayMs * 2 ** attempt);
    await sleep(failure.retryAfterMs ?? Math.round(backoff * (0.5 + Math.random() * 0.5)), policy.signal);
  }
}

function connectionError(
  err: unknown,
  timedOut: boolean,
  policy: RetryPolicy,
  retryable = true,
): ModelProviderError {
  if (err instanceof ModelProviderError && !timedOut) return err;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause?.message === 'unexpected redirect') {
    return new ModelProviderError(
      ModelErrorCode.http,
      'the model server answered with a redirect, which the runtime does not follow (the key must not go to another address): set model.baseUrl to the final address',
    );
  }
  const code = typeof cause?.code === 'string' ? cause.code : null;
  const what = timedOut
    ? `the model server sent nothing for ${policy.timeoutMs} ms (model.timeoutMs)`
    : `the model server could not be reached${code ? ` (${code})` : ''}`;
  return new ModelProviderError(
    ModelErrorCode.connection,
    `${what}${retryable ? '' : ' in the middle of its answer; the partial answer was discarded'}: check model.baseUrl and that the server is running`,
    { providerCode: code, retryable },
  );
}
