import { ModelErrorCode, ModelProviderError } from './errors.ts';

/** One server-sent event: its `event:` name (empty when absent) and its joined `data:` lines. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Bounds of one SSE stream. */
export interface SseLimits {
  /** Bytes of the whole body. */
  readonly maxBytes: number;
  /** Characters of one line. */
  readonly maxLineChars: number;
}

/** Counts what a stream delivered, so a caller knows whether any byte arrived. */
export interface SseProgress {
  bytes: number;
  /** Called on every chunk (e.g. to push an idle deadline back). */
  readonly onChunk?: () => void;
}

/**
 * Reads a `text/event-stream` body (the WHATWG event-stream format: lines ended by LF, CRLF or
 * CR; `data:` lines joined by LF; `event:`; comments and `id:`/`retry:` ignored; a blank line
 * dispatches). An event still open at the end of the stream is dispatched only when its last
 * line was complete, so a cut in the middle of a line never yields a half line. The body and
 * each line are bounded: crossing a bound fails with `model_protocol_error` before the data is
 * buffered.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  limits: SseLimits,
  progress: SseProgress = { bytes: 0 },
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8');
  const reader = body.getReader();
  let buffer = '';
  let skipLf = false;
  let event = '';
  let data: string[] = [];
  let dataChars = 0;
  let open = false;

  const line = (text: string): SseEvent | null => {
    if (text === '') {
      const out = open ? { event, data: data.join('\n') } : null;
      event = '';
      data = [];
      dataChars = 0;
      open = false;
      return out;
    }
    if (text.startsWith(':')) return null;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      dataChars += value.length + 1;
      if (dataChars > limits.maxLineChars) throw tooLong('event data', limits.maxLineChars);
      data.push(value);
      open = true;
    } else if (field === 'event') {
      event = value;
      open = true;
    }
    return null;
  };

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      progress.bytes += value.byteLength;
      progress.onChunk?.();
      if (progress.bytes > limits.maxBytes) {
        throw new ModelProviderError(
          ModelErrorCode.protocol,
          `the model server's response exceeded ${limits.maxBytes} bytes; the step was discarded`,
        );
      }
      buffer += decoder.decode(value, { stream: true });
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c === 10 && skipLf && i === start) {
          // The LF of a CRLF split across two chunks.
          skipLf = false;
          start = i + 1;
          continue;
        }
        skipLf = false;
        if (c !== 10 && c !== 13) continue;
        const out = line(buffer.slice(start, i));
        if (c === 13) {
          if (i + 1 < buffer.length) {
            if (buffer.charCodeAt(i + 1) === 10) i++;
          } else skipLf = true;
        }
        start = i + 1;
        if (out !== null) yield out;
      }
      buffer = buffer.slice(start);
      if (buffer.length > limits.maxLineChars) throw tooLong('line', limits.maxLineChars);
    }
    buffer += decoder.decode();
    // A trailing partial line is a cut stream: it is dropped, and so is the event it belonged to.
    if (buffer === '' && open) yield { event, data: data.join('\n') };
  } finally {
    await reader.cancel().catch(() => {});
  }
}

function tooLong(what: string, max: number): ModelProviderError {
  return new ModelProviderError(
    ModelErrorCode.protocol,
    `a ${what} of the model server's stream exceeded ${max} characters; the step was discarded`,
  );
}
