import type { Socket } from 'node:net';
import { z } from 'zod';
import type { ActorEvent, ActorTreeSnapshot } from '../inspect/index.ts';

/** The line that turns a control connection into the live actor stream (`snotra inspect`). */
export const InspectRequest = z.strictObject({ v: z.literal(1), type: z.literal('inspect') });

/** Streams open at once at most; more are answered with an error line and closed. */
export const MAX_ACTOR_STREAMS = 8;
/** A reader this far behind (bytes queued unsent) is sent one error line and closed. */
export const ACTOR_STREAM_LAG_BYTES = 1024 * 1024;

/** Where the stream takes the tree from (already redacted by the runtime). */
export interface ActorSource {
  snapshot(): ActorTreeSnapshot;
  on(listener: (e: ActorEvent) => void): () => void;
}

/** One line of the stream: the whole tree first, then each change, then `stopped` when the runtime stops. */
export type ActorStreamLine =
  | ({ readonly type: 'actors' } & ActorTreeSnapshot)
  | ActorEvent
  | { readonly type: 'stopped' }
  | { readonly type: 'error'; readonly error: { readonly code: string; readonly message: string } };

/**
 * The actor streams of one control socket: each gets the tree, then every change as a JSON line.
 * Bounded in number and in what each may have queued.
 */
export class ActorStreams {
  readonly #open = new Set<Socket>();

  constructor(private readonly source: ActorSource) {}

  /** Serves one connection that asked for the stream. */
  serve(socket: Socket): void {
    const write = (line: ActorStreamLine) => socket.write(`${JSON.stringify(line)}\n`);
    if (this.#open.size >= MAX_ACTOR_STREAMS) {
      write({
        type: 'error',
        error: { code: 'too_many_streams', message: `at most ${MAX_ACTOR_STREAMS} inspectors may be open` },
      });
      socket.end();
      return;
    }
    this.#open.add(socket);
    let off = () => {};
    const close = () => {
      off();
      this.#open.delete(socket);
    };
    socket.once('close', close);
    off = this.source.on((e) => {
      if (socket.destroyed || !this.#open.has(socket)) return;
      if (socket.writableLength > ACTOR_STREAM_LAG_BYTES) {
        write({ type: 'error', error: { code: 'client_lagging', message: 'the inspector read too slowly' } });
        close();
        socket.end();
        setTimeout(() => socket.destroy(), 5000).unref();
        return;
      }
      write(e);
    });
    write({ type: 'actors', ...this.source.snapshot() });
  }

  /** Tells every open stream that the runtime stops and ends it. */
  stopAll(): void {
    for (const socket of this.#open) {
      socket.end(`${JSON.stringify({ type: 'stopped' })}\n`);
      setTimeout(() => socket.destroy(), 1000).unref();
    }
    this.#open.clear();
  }
}
