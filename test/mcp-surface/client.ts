import type { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN } from '../support/snotra-process.ts';
import { eventually } from '../support/runtime.ts';

/** A real MCP client (the SDK's) connected over stdio to a `snotra mcp` child it spawned. */
export interface McpConnection {
  readonly client: Client;
  readonly pid: number;
  /** What the server wrote on stderr so far (its logs and ready line). */
  stderr(): string;
  /** The ready line the server wrote on stderr. */
  ready(): Record<string, unknown>;
  /** Calls a tool and returns its structured result (throws on a protocol error). */
  call(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ isError: boolean; value: Record<string, unknown>; text: string }>;
  /** Closes the client (stdin of the server ends) and waits until the server process is gone. */
  close(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawns `node bin/snotra.js mcp ...args` through `StdioClientTransport` and completes the MCP handshake. */
export async function connectMcp(args: string[], env: Record<string, string> = {}): Promise<McpConnection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), TZ: 'UTC', ...env },
    stderr: 'pipe',
  });
  let err = '';
  (transport.stderr as PassThrough).on('data', (d) => (err += String(d)));
  const client = new Client({ name: 'snotra-test', version: '1.0.0' });
  await client.connect(transport, { timeout: 60_000 });
  const pid = transport.pid as number;
  const readyLine = await eventually(
    () => err.split('\n').find((l) => l.includes('"event":"ready"')),
    30_000,
    'the mcp ready line on stderr',
  );
  return {
    client,
    pid,
    stderr: () => err,
    ready: () => JSON.parse(readyLine) as Record<string, unknown>,
    async call(name, args) {
      const r = await client.callTool({ name, arguments: args }, { timeout: 120_000 });
      const content = (r.content ?? []) as { type: string; text?: string }[];
      return {
        isError: r.isError === true,
        value: (r.structuredContent ?? {}) as Record<string, unknown>,
        text: content.map((c) => c.text ?? '').join(''),
      };
    },
    async close() {
      await client.close();
      await eventually(() => !alive(pid), 20_000, `snotra mcp (pid ${pid}) to exit`);
    },
  };
}
