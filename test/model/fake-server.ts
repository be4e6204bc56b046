import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

/** A request the fake model server received. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
  readonly raw: string;
}

/** What the server answers one request with. */
export type FakeReply =
  /** An SSE body, written chunk by chunk; `cut` destroys the socket instead of ending the response. */
  | {
      readonly sse: readonly string[];
      readonly cut?: boolean;
      readonly headers?: Record<string, string>;
      /** Holds the rest of the body, after the first `after` chunks, until `open` settles. */
      readonly gate?: { readonly after: number; readonly open: Promise<unknown> };
      /** More holds like `gate`, each before its chunk. */
      readonly gates?: readonly { readonly after: number; readonly open: Promise<unknown> }[];
    }
  /** A plain HTTP answer (errors). */
  | { readonly status: number; readonly json?: unknown; readonly headers?: Record<string, string> }
  /** Closes the connection without an answer. */
  | { readonly reset: true }
  /** Never answers (until the server closes). */
  | { readonly hang: true };

/** Reads an SSE fixture file, fills `{{NAME}}` placeholders and splits it into chunks at `\n\n`-ended events. */
export function fixture(path: string, vars: Readonly<Record<string, string>> = {}): string[] {
  let text = readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8');
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{{${k}}}`, v);
  return text.split(/(?<=\n\n)/).filter((c) => c !== '');
}

/**
 * A model server on 127.0.0.1 for tests: answers each request with the next reply of `replies`
 * (or with `route(request, n)`), records every request, and fails a request it has no reply for
 * with HTTP 599 so the test sees it.
 */
export class FakeModelServer {
  readonly requests: SeenRequest[] = [];
  #server: Server | null = null;
  #replies: FakeReply[] = [];
  route: ((req: SeenRequest, n: number) => FakeReply | undefined) | null = null;

  static async start(): Promise<FakeModelServer> {
    const s = new FakeModelServer();
    await s.#listen();
    return s;
  }

  get url(): string {
    const addr = this.#server?.address() as AddressInfo;
    return `http://127.0.0.1:${addr.port}`;
  }

  /** Queues replies, answered in order. */
  reply(...replies: FakeReply[]): this {
    this.#replies.push(...replies);
    return this;
  }

  /** Replies queued but not asked for. */
  get pending(): number {
    return this.#replies.length;
  }

  async #listen(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          body = {};
        }
        const seen: SeenRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body,
          raw,
        };
        this.requests.push(seen);
        const reply = this.route?.(seen, this.requests.length - 1) ?? this.#replies.shift();
        if (reply === undefined) {
          res.writeHead(599, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'the fake server has no reply for this request' } }));
          return;
        }
        void this.#answer(reply, res, req);
      });
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
  }

  async #answer(reply: FakeReply, res: ServerResponse, req: IncomingMessage): Promise<void> {
    if ('hang' in reply) return;
    if ('reset' in reply) {
      req.socket.destroy();
      return;
    }
    if ('status' in reply) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    for (const [i, chunk] of reply.sse.entries()) {
      if (reply.gate !== undefined && i === reply.gate.after) await reply.gate.open;
      for (const g of reply.gates ?? []) if (i === g.after) await g.open;
      res.write(chunk);
      // Let each chunk go out on its own, as a real server's tokens do.
      await new Promise((r) => setImmediate(r));
    }
    if (reply.cut === true) {
      // Give the written chunks time to leave before the connection drops.
      await new Promise((r) => setTimeout(r, 20));
      res.socket?.destroy();
    } else res.end();
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#server?.closeAllConnections();
      this.#server?.close(() => resolve());
    });
  }
}
