// The live feed: `GET /v1/events` (SSE) read with fetch() and a stream reader, because
// EventSource cannot carry the Authorization header the desktop shell adds. Reconnects with
// Last-Event-ID so nothing buffered is missed.
import { paths } from './api.ts';

export type FeedStatus = 'connecting' | 'live' | 'reconnecting' | 'unauthorized';

export interface Frame {
  readonly seq: number | null;
  readonly type: string;
  readonly data: unknown;
}

/** Parses one SSE block (`id:`, `event:`, `data:` lines; comments skipped); null for a comment-only block. */
export function parseFrame(block: string): Frame | null {
  let id: string | null = null;
  let type = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.join('\n'));
  } catch {
    return null;
  }
  const seq = id !== null && /^\d+$/.test(id) ? Number(id) : null;
  return { seq, type, data: parsed };
}

/** Streams the feed until the page closes, calling `onFrame` for each event and `onStatus` on changes. */
export function connectEvents(onFrame: (f: Frame) => void, onStatus: (s: FeedStatus) => void): void {
  let last: number | null = null;
  let delay = 500;
  const loop = async (): Promise<void> => {
    for (;;) {
      try {
        const res = await fetch(paths.events, {
          cache: 'no-store',
          credentials: 'same-origin',
          headers: last === null ? {} : { 'Last-Event-ID': String(last) },
        });
        if (res.status === 401) {
          // Neither the desktop shell's token nor a `snotra open` session: say so, and try again slowly.
          onStatus('unauthorized');
          delay = 10_000;
          await new Promise((r) => setTimeout(r, delay));
          continue;
        }
        if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
        onStatus('live');
        delay = 500;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value.replace(/\r\n?/g, '\n');
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const frame = parseFrame(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            if (frame === null) continue;
            if (frame.seq !== null) last = frame.seq;
            onFrame(frame);
          }
        }
        onStatus('reconnecting');
      } catch {
        onStatus('reconnecting');
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10_000);
    }
  };
  onStatus('connecting');
  void loop();
}
