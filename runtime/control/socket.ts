import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';
import { ActorStreams, InspectRequest, type ActorSource } from './actor-stream.ts';

/** The control socket's file name inside the state dir. */
export const CONTROL_SOCKET = 'control.sock';

/**
 * A notification on the control socket. It carries no authority: it only tells the runtime to
 * look at the store, where the decision was written by an OS-authenticated local user.
 */
export const ControlMessage = z.strictObject({
  v: z.literal(1),
  /** `approval_decided`: look at approval `id`; `goal_control`: apply the goal requests (goal `id`). */
  type: z.enum(['approval_decided', 'goal_control']),
  id: z.string().min(1).max(256),
});
export type ControlMessage = z.infer<typeof ControlMessage>;

const MAX_LINE = 4096;

/** What the control socket serves besides notifications. */
export interface ControlOptions {
  /** The live actor tree for `snotra inspect` (a `{"v":1,"type":"inspect"}` line opens the stream). */
  readonly actors?: ActorSource;
}

/**
 * Listens on `<stateDir>/control.sock` with mode 0600 (the state dir itself is 0700), so only the
 * local user who runs the runtime can connect. Malformed lines are counted and ignored. With
 * `options.actors`, a connection may ask for the live actor stream instead (read-only, redacted).
 */
export async function startControlSocket(
  stateDir: string,
  onMessage: (message: ControlMessage) => void,
  options: ControlOptions = {},
): Promise<{ path: string; invalid: () => number; close: () => Promise<void> }> {
  const path = join(stateDir, CONTROL_SOCKET);
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // No stale socket.
  }
  let invalid = 0;
  const streams = options.actors === undefined ? null : new ActorStreams(options.actors);
  const server: Server = createServer((socket) => {
    let buffer = '';
    let streaming = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      if (streaming) return; // A stream is read-only: what the client sends is ignored.
      buffer += chunk;
      if (buffer.length > MAX_LINE) {
        invalid++;
        socket.destroy();
        return;
      }
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (streams !== null && isInspectRequest(line)) {
          streaming = true;
          buffer = '';
          streams.serve(socket);
          return;
        }
        let parsed: ControlMessage | null = null;
        try {
          const r = ControlMessage.safeParse(JSON.parse(line));
          if (r.success) parsed = r.data;
        } catch {
          parsed = null;
        }
        if (parsed === null) invalid++;
        else onMessage(parsed);
        socket.write(parsed === null ? 'invalid\n' : 'ok\n');
      }
    });
    socket.on('error', () => socket.destroy());
  });
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } finally {
    process.umask(oldMask);
  }
  chmodSync(path, 0o600);
  return {
    path,
    invalid: () => invalid,
    close: () =>
      new Promise<void>((resolve) => {
        streams?.stopAll();
        server.close(() => resolve());
        try {
          unlinkSync(path);
        } catch {
          // Already gone.
        }
      }),
  };
}

function isInspectRequest(line: string): boolean {
  try {
    return InspectRequest.safeParse(JSON.parse(line)).success;
  } catch {
    return false;
  }
}

/** Tells a running runtime to look at the store. Resolves false when no runtime listens. */
export function notifyRuntime(stateDir: string, message: ControlMessage, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(join(stateDir, CONTROL_SOCKET));
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(`${JSON.stringify(message)}\n`));
    socket.on('data', () => done(true));
  });
}
