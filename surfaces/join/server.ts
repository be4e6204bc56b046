import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { Runtime } from '../../runtime/index.ts';
import { ChatRefused, chatReply } from './chat-server.ts';
import { JOIN_SOCKET, JoinRequest, MAX_REQUEST_LINE, type JoinErrorBody } from './protocol.ts';

/** Connections open at once at most; more are told so and closed. */
export const MAX_JOINED = 32;
/** A follower this far behind (bytes queued unsent) is sent one error line and closed. */
export const JOIN_LAG_BYTES = 4 * 1024 * 1024;

export interface JoinServerOptions {
  readonly runtime: Runtime;
  readonly stateDir: string;
  /** The agents of the running config (what `hello` names). */
  readonly agents: readonly string[];
  /** Mints a single-use login URL of the web app (absent: the runtime has no sidecar). */
  readonly login?: () => string;
}

export interface JoinServer {
  readonly path: string;
  close(): Promise<void>;
}

/** A request refused with a stable code (sent as the reply's error). */
class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Listens on `<stateDir>/join.sock` (mode 0600; the state dir is 0700) so that surfaces started
 * after `snotra start` join this runtime instead of failing `state_dir_locked`: they submit
 * messages, follow the run feed (redacted, `model.delta` included), wait for runs, decide
 * approvals as the local user, rewind to a checkpoint (locked against live runs), ask for a
 * web app login URL, and do what `snotra chat` does (`chat-server.ts`). Only the user who runs the
 * runtime can connect (the same boundary as the control socket and the store). A bad line gets
 * an error line naming what was wrong; it never stops the runtime.
 */
export async function startJoinServer(o: JoinServerOptions): Promise<JoinServer> {
  const { runtime } = o;
  const path = join(o.stateDir, JOIN_SOCKET);
  try {
    // Only a runtime holding the state dir's lock starts this: a socket left here is stale.
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // None left.
  }
  const user = `local:${userInfo().username}`;
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    if (open.size >= MAX_JOINED) {
      socket.end(
        line({
          type: 'error',
          error: { code: 'too_many_joined', message: `at most ${MAX_JOINED} surfaces may join at once` },
        }),
      );
      return;
    }
    open.add(socket);
    const offs: Array<() => void> = [];
    socket.once('close', () => {
      open.delete(socket);
      for (const off of offs) off();
    });
    socket.on('error', () => socket.destroy());
    socket.setEncoding('utf8');
    const write = (value: unknown) => {
      if (!socket.destroyed && socket.writable) socket.write(line(value));
    };
    const reply = (req: number, body: Record<string, unknown>) =>
      write({ type: 'reply', req, ok: true, ...body });
    const fail = (req: number, error: JoinErrorBody) => write({ type: 'reply', req, ok: false, error });
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const parsed = parseRequest(text);
        if ('error' in parsed) {
          write({ type: 'error', error: parsed.error });
          continue;
        }
        const r = parsed.request;
        void handle(r, { reply, write, offs, socket }).catch((err: unknown) =>
          fail(r.req, {
            code: err instanceof Refused || err instanceof ChatRefused ? err.code : codeOf(err),
            message: runtime.read.redact(String((err as Error).message)),
          }),
        );
      }
      if (buffer.length > MAX_REQUEST_LINE) {
        write({
          type: 'error',
          error: { code: 'line_too_long', message: `a request line is at most ${MAX_REQUEST_LINE} bytes` },
        });
        socket.destroy();
      }
    });
  });

  interface Conn {
    reply(req: number, body: Record<string, unknown>): void;
    write(value: unknown): void;
    offs: Array<() => void>;
    socket: Socket;
  }

  const handle = async (r: JoinRequest, c: Conn): Promise<void> => {
    switch (r.type) {
      case 'hello':
        c.reply(r.req, { pid: process.pid, stateDir: o.stateDir, agents: o.agents });
        return;
      case 'follow': {
        const off = runtime.runs.onRunEvent((e) => {
          if (c.socket.writableLength > JOIN_LAG_BYTES) {
            c.write({
              type: 'error',
              error: { code: 'client_lagging', message: 'the joined surface read the feed too slowly' },
            });
            c.socket.destroy();
            return;
          }
          c.write({ type: 'event', event: runtime.read.redact(e) });
        });
        c.offs.push(off);
        c.reply(r.req, {});
        return;
      }
      case 'submit': {
        if (!o.agents.includes(r.agent))
          throw new Refused(
            'unknown_agent',
            `agent ${JSON.stringify(r.agent)} is not an agent of the running runtime; its agents: ${o.agents.join(', ') || '(none)'}`,
          );
        let session = r.session;
        if (r.continue === true) {
          const latest = runtime.sessions.latest();
          if (latest === null)
            throw new Refused(
              'session_not_found',
              '--continue: no conversation yet in the running runtime’s workspace',
            );
          session = latest.sessionId;
        }
        const runId = await runtime.runs.submit(r.agent, r.text, {
          ...(session !== undefined ? { sessionId: session, taskId: session } : {}),
          interaction: r.unattended ? 'unattended' : 'attended',
          surface: 'cli',
        });
        c.reply(r.req, { runId });
        return;
      }
      case 'wait': {
        const outcome = await runtime.waitForRun(r.runId);
        c.reply(r.req, { outcome: runtime.read.redact(outcome) });
        return;
      }
      case 'decide': {
        const result = await runtime.approvals.decideAsync(r.approvalId, r.decision, user, r.reason);
        c.reply(r.req, { result: runtime.read.redact(result) });
        return;
      }
      case 'grant': {
        const result = runtime.approvals.approveWithGrant(r.approvalId, r.scope, user);
        c.reply(r.req, { result: runtime.read.redact(result) });
        return;
      }
      case 'rewind': {
        const outcome = runtime.runs.rewind(r.checkpoint, {
          dryRun: r.dryRun,
          user,
          surface: r.surface ?? 'cli',
        });
        c.reply(r.req, { outcome });
        return;
      }
      case 'login':
        if (o.login === undefined)
          throw new Refused(
            'no_sidecar',
            'the running runtime has no sidecar (sidecar.enabled is false): no web app to open',
          );
        c.reply(r.req, { url: o.login() });
        return;
      default:
        // What `snotra chat` asks (sessions, compaction, the Inbox, modes, run control).
        c.reply(r.req, await chatReply({ runtime, user, agents: o.agents }, r));
        return;
    }
  };

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
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) {
          s.end(line({ type: 'stopped' }));
          setTimeout(() => s.destroy(), 1000).unref();
        }
        server.close(() => resolve());
        try {
          unlinkSync(path);
        } catch {
          // Already gone.
        }
      }),
  };
}

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** A request line, or an error naming what was wrong with it. */
export function parseRequest(text: string): { request: JoinRequest } | { error: JoinErrorBody } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: { code: 'invalid_request', message: 'join socket: a request line is not JSON' } };
  }
  const r = JoinRequest.safeParse(json);
  if (r.success) return { request: r.data };
  return {
    error: {
      code: 'invalid_request',
      message: `join socket: ${z.prettifyError(r.error).replace(/\n/g, '; ')}`,
    },
  };
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[a-z][a-z0-9_]*$/.test(code) ? code : 'request_failed';
}
