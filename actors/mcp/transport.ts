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
    readonly code: 'mcp_message_too_large' | 'mcp_invalid_message' | 'mcp_pipe_closed',
    message: string,
  ) {
    super(message);
    this.name = 'McpTransportError';
  }
}

/**
 * Guarantees: a line longer than `maxLineBytes` is never buffered beyond that bound — the
 * transport reports `mcp_message_too_large` and closes (the connection then treats the server as
 * failed); a line that is not a JSON-RPC message is reported (`onerror`) and skipped; `close()`
 * ends stdin and detaches from the pipes (ending the process is the supervisor's job).
 */
export class PipeTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  #chunks: Buffer[] = [];
  #pending = 0;
  #closed = false;

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
      if (nl === -1) break;
      const part = chunk.subarray(start, nl);
      if (this.#pending + part.length > this.options.maxLineBytes) return this.#tooLarge();
      this.#chunks.push(part);
      const line = Buffer.concat(this.#chunks).toString('utf8').replace(/\r$/, '');
      this.#chunks = [];
      this.#pending = 0;
      start = nl + 1;
      if (line.trim() !== '') this.#deliver(line);
      if (this.#closed) return;
    }
    const rest = chunk.subarray(start);
    if (this.#pending + rest.length > this.options.maxLineBytes) return this.#tooLarge();
    if (rest.length > 0) {
      this.#chunks.push(rest);
      this.#pending += rest.length;
    }
  };

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
    await new Promise<void>((resolve, reject) => {
      this.pipes.stdin.write(text, (err) => (err ? reject(err) : resolve()));
    });
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
    this.onclose?.();
  }
}
