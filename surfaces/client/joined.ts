import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { descendsFrom, type RunFeedEvent, type RunOutcome } from '../../runtime/index.ts';
import { JOIN_SOCKET, JoinLine, type HelloReply, type RequestBody } from '../join/protocol.ts';
import { ClientError } from './errors.ts';
import type { ClientFeed, DecideResult, RuntimeClient } from './types.ts';

/** How long a running runtime has to answer `hello` before joining gives up. */
export const JOIN_HELLO_TIMEOUT_MS = 10_000;

type Pending = { resolve: (body: Record<string, unknown>) => void; reject: (err: Error) => void };

/** One connection to a running runtime's join socket: requests and their replies, and the feed. */
export class JoinConnection {
  #next = 0;
  readonly #pending = new Map<number, Pending>();
  #buffer = '';
  #gone: ClientError | null = null;
  readonly #ended = new AbortController();

  constructor(
    private readonly socket: Socket,
    private readonly onEvent: ClientFeed,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#data(chunk));
    socket.on('error', () => socket.destroy());
    socket.once('close', () =>
      this.#end(new ClientError('runtime_gone', 'the running runtime stopped (its join connection closed)')),
    );
  }

  /**
   * Aborted as soon as the connection ends (the runtime said it stopped, the socket closed, or the
   * runtime refused this client), whether or not a request was waiting; its reason is the
   * `ClientError` every later request rejects with.
   */
  get gone(): AbortSignal {
    return this.#ended.signal;
  }

  /** Sends one request; resolves with its reply's body, rejects with the reply's error. */
  request(body: RequestBody): Promise<Record<string, unknown>> {
    if (this.#gone !== null) return Promise.reject(this.#gone);
    const req = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(req, { resolve, reject });
      this.socket.write(`${JSON.stringify({ v: 1, req, ...body })}\n`);
    });
  }

  close(): void {
    this.socket.end();
  }

  #data(chunk: string): void {
    this.#buffer += chunk;
    let nl: number;
    while ((nl = this.#buffer.indexOf('\n')) >= 0) {
      const text = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(nl + 1);
      let parsed: JoinLine;
      try {
        parsed = JoinLine.parse(JSON.parse(text));
      } catch {
        this.#end(
          new ClientError('bad_answer', 'the running runtime sent a line this client does not understand'),
        );
        this.socket.destroy();
        return;
      }
      this.#line(parsed);
    }
  }

  #line(l: JoinLine): void {
    if (l.type === 'event') {
      this.onEvent(l.event as unknown as RunFeedEvent);
      return;
    }
    if (l.type === 'stopped') {
      this.#end(new ClientError('runtime_gone', 'the running runtime stopped'));
      return;
    }
    if (l.type === 'error') {
      this.#end(new ClientError(l.error.code, l.error.message));
      this.socket.destroy();
      return;
    }
    const waiting = this.#pending.get(l.req);
    this.#pending.delete(l.req);
    if (waiting === undefined) return;
    if (l.ok) waiting.resolve(l as Record<string, unknown>);
    else waiting.reject(new ClientError(l.error.code, l.error.message));
  }

  #end(err: ClientError): void {
    this.#gone ??= err;
    for (const p of this.#pending.values()) p.reject(this.#gone);
    this.#pending.clear();
    if (!this.#ended.signal.aborted) this.#ended.abort(this.#gone);
  }
}

/** Connects to `<stateDir>/join.sock`; null when no runtime listens there (none, or a stale socket). */
export function connectJoinSocket(stateDir: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = createConnection(join(stateDir, JOIN_SOCKET));
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(null);
    });
  });
}

/** A connection to a running runtime that answered `hello` and follows its run feed. */
export interface Joined {
  readonly conn: JoinConnection;
  readonly hello: HelloReply;
}

/**
 * Connects to the runtime running on `stateDir` (`snotra start`), says hello and follows its run
 * feed from the start (no event of a run submitted through it is missed); null when none
 * listens. Refused (`joined_from_agent_process`) when this process descends from that runtime:
 * an agent's tool must not submit messages or decide approvals through it.
 */
export async function joinRunning(stateDir: string, onRunEvent: ClientFeed): Promise<Joined | null> {
  const socket = await connectJoinSocket(stateDir);
  if (socket === null) return null;
  const conn = new JoinConnection(socket, onRunEvent);
  let hello: HelloReply;
  const timer = setTimeout(() => socket.destroy(), JOIN_HELLO_TIMEOUT_MS);
  try {
    hello = (await conn.request({ type: 'hello' })) as unknown as HelloReply;
    if (descendsFrom(hello.pid)) {
      throw new ClientError(
        'joined_from_agent_process',
        'a process started by the runtime (an agent’s tool) cannot join it to submit messages or decide approvals',
      );
    }
    await conn.request({ type: 'follow' });
  } catch (err) {
    conn.close();
    socket.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return { conn, hello };
}

/**
 * Joins the runtime running on `stateDir` (`snotra start`) as a `RuntimeClient`, or resolves
 * null when none listens (`joinRunning`).
 */
export async function tryJoin(stateDir: string, onRunEvent: ClientFeed): Promise<RuntimeClient | null> {
  const joined = await joinRunning(stateDir, onRunEvent);
  if (joined === null) return null;
  const { conn, hello } = joined;
  const result = async (body: RequestBody) => (await conn.request(body)).result as DecideResult;
  return {
    kind: 'joined',
    pid: hello.pid,
    agents: hello.agents,
    async submit(m) {
      const reply = await conn.request({
        type: 'submit',
        agent: m.agent,
        text: m.text,
        ...(m.session === undefined ? {} : { session: m.session }),
        ...(m.continue === true ? { continue: true } : {}),
        unattended: m.unattended,
      });
      return String(reply.runId);
    },
    async waitForRun(runId) {
      return (await conn.request({ type: 'wait', runId })).outcome as RunOutcome;
    },
    decideAsync: (approvalId, decision, _user, reason) =>
      result({ type: 'decide', approvalId, decision, ...(reason === undefined ? {} : { reason }) }),
    approveWithGrant: (approvalId, scope) => result({ type: 'grant', approvalId, scope }),
    async close() {
      conn.close();
    },
  };
}
