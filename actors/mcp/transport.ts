/**
 * The MCP stdio transport over a supervised child's pipes: newline-delimited JSON-RPC on the
 * child's stdin/stdout (MCP stdio transport). The child is started by the process supervisor
 * (sandbox, sanitized environment, process group, lifeline), never by the SDK.
 */
import type { Readable, Writable } from 'node:stream';
import {
  deserializeMessage,
  serializeMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { KEPT_EDGE_BYTES, oversizedMessageId } from './oversized.ts';

/** The JSON-RPC error code of the answer put in place of a discarded oversized message. */
export const OVERSIZED_ERROR_CODE = -32_099;

/** The last `KEPT_EDGE_BYTES` of `prev` followed by `next`. */
function keepTail(prev: Buffer, next: Buffer): Buffer {
  if (next.length >= KEPT_EDGE_BYTES) return Buffer.from(next.subarray(next.length - KEPT_EDGE_BYTES));
  const both = Buffer.concat([prev, next]);
  return both.subarray(Math.max(0, both.length - KEPT_EDGE_BYTES));
}

/** A request's id and the object it is known by (its `arguments`, else its `params`), or null. */
function requestKey(message: JSONRPCMessage): { id: string | number; key: object } | null {
  const m = message as { id?: unknown; method?: unknown; params?: { arguments?: unknown } };
  if (typeof m.method !== 'string' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return null;
  const args = m.params?.arguments;
  const key = typeof args === 'object' && args !== null ? args : m.params;
  return typeof key === 'object' && key !== null ? { id: m.id, key } : null;
}

/** The pipes of a child speaking MCP over stdio. */
export interface StdioPipes {
  readonly stdin: Writable;
  readonly stdout: Readable;
}

/** Options of `PipeTransport`. */
export interface PipeTransportOptions {
  /** Longest JSON-RPC line accepted from the server, in bytes; a longer one closes the transport. */
  readonly maxLineBytes: number;
}

/** A server message that cannot be accepted (too long, not JSON-RPC). Names no content. */
export class McpTransportError extends Error {
  constructor(
    readonly code:
      'mcp_message_too_large' | 'mcp_message_discarded' | 'mcp_invalid_message' | 'mcp_pipe_closed',
    message: string,
  ) {
    super(message);
    this.name = 'McpTransportError';
  }
}

/** What became of a request, known by the object passed as its `params.arguments` (or `params`). */
export type RequestFate = 'unsent' | 'written' | 'oversized';

/** A request written to the server and not answered yet. */
interface Waiting {
  readonly key: object;
}

/**
 * Guarantees: a line longer than `maxLineBytes` is never buffered beyond that bound — the rest
 * of it is read and dropped as it arrives, keeping only its first and last bytes. When those
 * name a request that waits for its answer (or exactly one request waits and they name none),
 * that request is answered with a JSON-RPC error and marked `oversized`, the transport reports
 * `mcp_message_discarded` and goes on; otherwise it reports `mcp_message_too_large` and closes
 * (the connection then treats the server as failed). A line that is not a JSON-RPC message is
 * reported (`onerror`) and skipped. A request counts as `written` once the pipe took its bytes
 * (the server may have read it); one refused by a closed transport or a failed write is
 * `unsent` (it never reached the server). `close()` ends stdin and detaches from the
 * pipes (ending the process is the supervisor's job).
 */
export class PipeTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  #chunks: Buffer[] = [];
  #pending = 0;
  #closed = false;
  /** The line being dropped (over the limit): its first and last bytes only. */
  #discarding: { head: Buffer; tail: Buffer } | null = null;
  readonly #waiting = new Map<string | number, Waiting>();
  readonly #written = new WeakSet<object>();
  readonly #oversized = new WeakSet<object>();

  constructor(
    private readonly pipes: StdioPipes,
    private readonly options: PipeTransportOptions,
  ) {}

  async start(): Promise<void> {
    this.pipes.stdout.on('data', this.#onData);
    this.pipes.stdout.on('end', this.#onEnd);
    this.pipes.stdout.on('error', this.#onEnd);
    this.pipes.stdin.on('error', this.#onEnd);
  }

  readonly #onEnd = (): void => {
    void this.close();
  };

  readonly #onData = (chunk: Buffer): void => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const part = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      if (this.#discarding === null && this.#pending + part.length > this.options.maxLineBytes) {
        this.#discarding = { head: this.#headOf(part), tail: Buffer.alloc(0) };
        this.#chunks = [];
        this.#pending = 0;
      }
      if (this.#discarding !== null) {
        this.#discarding.tail = keepTail(this.#discarding.tail, part);
        if (nl === -1) return;
        const dropped = this.#discarding;
        this.#discarding = null;
        start = nl + 1;
        this.#dropped(dropped.head, dropped.tail);
        if (this.#closed) return;
        continue;
      }
      if (nl === -1) {
        if (part.length > 0) {
          this.#chunks.push(part);
          this.#pending += part.length;
        }
        return;
      }
      this.#chunks.push(part);
      const line = Buffer.concat(this.#chunks).toString('utf8').replace(/\r$/, '');
      this.#chunks = [];
      this.#pending = 0;
      start = nl + 1;
      if (line.trim() !== '') this.#deliver(line);
      if (this.#closed) return;
    }
  };

  /** The first `KEPT_EDGE_BYTES` of the line buffered so far followed by `part`. */
  #headOf(part: Buffer): Buffer {
    const kept: Buffer[] = [];
    let left = KEPT_EDGE_BYTES;
    for (const c of [...this.#chunks, part]) {
      if (left <= 0) break;
      const piece = c.subarray(0, left);
      kept.push(piece);
      left -= piece.length;
    }
    return Buffer.concat(kept);
  }

  /** A line over the limit was dropped: answer the request it was for, or give up on the server. */
  #dropped(head: Buffer, tail: Buffer): void {
    const named = oversizedMessageId(head, tail);
    const id =
      named !== null && this.#waiting.has(named)
        ? named
        : named === null && this.#waiting.size === 1
          ? [...this.#waiting.keys()][0]
          : undefined;
    const waiting = id === undefined ? undefined : this.#waiting.get(id);
    if (id === undefined || waiting === undefined) return this.#tooLarge();
    this.#waiting.delete(id);
    this.#oversized.add(waiting.key);
    const text = `the server sent a message longer than ${this.options.maxLineBytes} bytes`;
    this.onerror?.(new McpTransportError('mcp_message_discarded', `${text}; it was discarded`));
    this.onmessage?.({
      jsonrpc: '2.0',
      id,
      error: { code: OVERSIZED_ERROR_CODE, message: `${text}; it was discarded unread` },
    } as JSONRPCMessage);
  }

  /** What became of the request whose `params.arguments` (or `params`) is `key`. */
  fate(key: object): RequestFate {
    if (this.#oversized.has(key)) return 'oversized';
    return this.#written.has(key) ? 'written' : 'unsent';
  }

  #deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      this.onerror?.(
        new McpTransportError(
          'mcp_invalid_message',
          'the server wrote a line that is not a JSON-RPC message',
        ),
      );
      return;
    }
    const id = (message as { id?: unknown }).id;
    if (!('method' in message) && (typeof id === 'string' || typeof id === 'number')) {
      this.#waiting.delete(id);
    }
    this.onmessage?.(message);
  }

  #tooLarge(): void {
    this.#chunks = [];
    this.#pending = 0;
    this.onerror?.(
      new McpTransportError(
        'mcp_message_too_large',
        `the server sent a message longer than ${this.options.maxLineBytes} bytes`,
      ),
    );
    void this.close();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new McpTransportError('mcp_pipe_closed', 'the server connection is closed');
    const text = serializeMessage(message);
    const key = requestKey(message);
    // Waiting before the write: its answer may be read before the write's callback runs.
    if (key !== null) this.#waiting.set(key.id, { key: key.key });
    try {
      await new Promise<void>((resolve, reject) => {
        this.pipes.stdin.write(text, (err) => (err ? reject(err) : resolve()));
      });
    } catch (error) {
      if (key !== null) this.#waiting.delete(key.id);
      throw error;
    }
    // Taken by the pipe: the server may have read it, even if it closed since.
    if (key !== null) this.#written.add(key.key);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.pipes.stdout.off('data', this.#onData);
    this.pipes.stdout.off('end', this.#onEnd);
    this.pipes.stdout.off('error', this.#onEnd);
    this.pipes.stdin.off('error', this.#onEnd);
    // Late pipe errors after closing change nothing; they must not become unhandled events.
    this.pipes.stdout.on('error', () => {});
    this.pipes.stdin.on('error', () => {});
    this.pipes.stdout.resume();
    this.pipes.stdin.end();
    this.#chunks = [];
    this.#discarding = null;
    this.#waiting.clear();
    this.onclose?.();
  }
}
