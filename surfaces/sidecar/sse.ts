import type { IncomingMessage, ServerResponse } from 'node:http';
import { BASE_HEADERS } from './errors.ts';
import type { EventHub, Sequenced } from './hub.ts';

/** A client this far behind (bytes queued unsent) is sent one error event and closed. */
export const SSE_LAG_BYTES = 1024 * 1024;
export const HEARTBEAT_MS = 10_000;

function frame(e: Sequenced): string {
  return `id: ${e.seq}\nevent: ${e.event.type}\ndata: ${JSON.stringify(e.event)}\n\n`;
}

/** `Last-Event-ID` as a sequence number, or null when absent or not a number. */
export function lastEventIdOf(req: IncomingMessage): number | null {
  const raw = req.headers['last-event-id'];
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) return null;
  return Number(raw);
}

/**
 * Streams the hub to one client as Server-Sent Events: replay after `Last-Event-ID`, then live
 * events, a heartbeat comment every HEARTBEAT_MS. `release` runs once when the stream ends.
 */
export function serveEvents(
  req: IncomingMessage,
  res: ServerResponse,
  hub: EventHub,
  cors: Readonly<Record<string, string>>,
  release: () => void,
): void {
  res.writeHead(200, {
    ...BASE_HEADERS,
    ...cors,
    'Content-Type': 'text/event-stream; charset=utf-8',
    Connection: 'keep-alive',
  });
  res.write(': snotra sidecar events\n\n');
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(heartbeat);
    release();
  };
  const send = (e: Sequenced) => {
    if (closed) return;
    if (res.writableLength > SSE_LAG_BYTES) {
      res.write(
        `event: error\ndata: ${JSON.stringify({ error: { code: 'client_lagging', message: 'the client read too slowly; reconnect with Last-Event-ID' } })}\n\n`,
      );
      close();
      res.end();
      setTimeout(() => res.destroy(), 5000).unref();
      return;
    }
    res.write(frame(e));
  };
  const unsubscribe = hub.subscribe(send);
  const last = lastEventIdOf(req);
  if (last !== null && hub.missedSince(last)) {
    // Said once, before what replay still has: the client re-reads the state instead of trusting it.
    res.write(
      `event: error\ndata: ${JSON.stringify({ error: { code: 'replay_gap', message: `events after id ${last} are no longer buffered; read the current state again` } })}\n\n`,
    );
  }
  for (const e of hub.since(last)) send(e);
  const heartbeat = setInterval(() => {
    if (!closed) res.write(': heartbeat\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  res.on('close', close);
}
