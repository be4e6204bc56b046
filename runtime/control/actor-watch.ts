import { createConnection } from 'node:net';
import { join } from 'node:path';
import type { ActorStreamLine } from './actor-stream.ts';
import { CONTROL_SOCKET } from './socket.ts';

/** A running runtime's actor stream could not be opened. */
export class NotRunningError extends Error {
  readonly code = 'not_running';
}

/** What `watchActors` reports. */
export interface ActorWatch {
  /** Resolves when the stream ends: `stopped` (the runtime stopped), `closed` (the socket closed), or `closed by us`. */
  readonly ended: Promise<'stopped' | 'closed' | 'cancelled'>;
  cancel(): void;
}

/**
 * Opens the live actor stream of the runtime on `stateDir` through its control socket (0600, the
 * local user only) and calls `onLine` for each line. Rejects with NotRunningError when no
 * runtime listens.
 */
export function watchActors(stateDir: string, onLine: (line: ActorStreamLine) => void): Promise<ActorWatch> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(join(stateDir, CONTROL_SOCKET));
    let state: 'connecting' | 'open' | 'stopped' | 'cancelled' = 'connecting';
    let buffer = '';
    let endedResolve: (r: 'stopped' | 'closed' | 'cancelled') => void = () => {};
    const ended = new Promise<'stopped' | 'closed' | 'cancelled'>((r) => (endedResolve = r));
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      state = 'open';
      socket.write(`${JSON.stringify({ v: 1, type: 'inspect' })}\n`);
      resolve({
        ended,
        cancel: () => {
          state = 'cancelled';
          socket.destroy();
        },
      });
    });
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let line: ActorStreamLine;
        try {
          line = JSON.parse(text) as ActorStreamLine;
        } catch {
          continue; // Not from a runtime of ours: skipped.
        }
        if (line.type === 'stopped') state = 'stopped';
        if (state !== 'cancelled') onLine(line);
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (state === 'connecting') {
        reject(
          new NotRunningError(
            `no runtime is running on the state dir ${stateDir} (${err.code ?? err.message}); start one with snotra start`,
          ),
        );
      }
    });
    socket.on('close', () =>
      endedResolve(state === 'stopped' ? 'stopped' : state === 'cancelled' ? 'cancelled' : 'closed'),
    );
  });
}
