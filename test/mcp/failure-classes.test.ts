/**
 * The three ways an MCP call can fail without the tool's own error, told apart against a real
 * server built with the SDK (test/fixtures/mcp-sdk-fragile.mjs) in the OS sandbox:
 * an answer over the line limit is `mcp_invalid_response` (dropped as it streams, never held
 * whole; the server goes on), a server that dies with the call in flight is `mcp_server_crashed`
 * (outcome unknown), and a call that never reached it — waiting behind the call that crashed it,
 * or made while it restarts — is `mcp_server_unavailable` (not run: a retry runs it once).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpHost } from '../../actors/mcp/index.ts';
import { hostMcp } from './hosted.ts';
import { REPO, eventually, mcpFixture } from './support.ts';

const FRAGILE = join(REPO, 'test/fixtures/mcp-sdk-fragile.mjs');
/** A call time limit no test waits for: a call that ends did so because the runtime saw why. */
const HOUR = 3_600_000;

interface Started {
  readonly host: McpHost;
  readonly call: (tool: string, args: Record<string, unknown>) => Promise<unknown>;
  readonly log: () => string[];
}

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

/** Starts the fragile server (in the OS sandbox unless `sandbox: false`) behind a runtime host. */
async function start(limits: Record<string, number>, { sandbox = true } = {}): Promise<Started> {
  const fx = mcpFixture(
    (project) => ({
      mcp: {
        servers: {
          f: {
            command: process.execPath,
            args: [FRAGILE],
            env: { FRAGILE_LOG: join(project, 'fragile.log') },
            network: false,
          },
        },
      },
    }),
    'unused-secret-fragile',
  );
  const hosted = await hostMcp(fx, { limits, sandbox });
  cleanup = hosted.close;
  await hosted.host.start();
  const call = (tool: string, args: Record<string, unknown>): Promise<unknown> =>
    hosted.call(`mcp:f:${tool}`, args);
  const file = join(fx.project, 'fragile.log');
  const log = (): string[] =>
    existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  return { host: hosted.host, call, log };
}

const ready = (host: McpHost): Promise<unknown> =>
  eventually(() => host.status()[0]?.state === 'ready', 60_000, 'server ready');

describe('MCP call failures, told apart (a real SDK server)', () => {
  it('a 50 MB answer is mcp_invalid_response, dropped as it streams (never held whole); the server goes on', async () => {
    const s = await start({ maxLineBytes: 1024 * 1024 });
    await ready(s.host);
    const pid = s.host.status()[0]?.pid;
    const before = process.memoryUsage();
    let peak = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.arrayBuffers - before.arrayBuffers + (m.heapUsed - before.heapUsed));
    }, 5);
    const bytes = 50 * 1024 * 1024;
    try {
      await expect(s.call('big', { bytes })).rejects.toMatchObject({
        code: 'mcp_invalid_response',
        message: expect.stringContaining('over the size limit'),
      });
    } finally {
      clearInterval(sampler);
    }
    // Buffering it whole would hold its 50 MB at least twice (the bytes, then the text); what
    // grew is read chunks not yet collected, never the message.
    expect(peak).toBeLessThan(bytes);
    expect(s.log().filter((l) => l.startsWith('call big'))).toEqual([`call big ${bytes}`]);
    // Not a crash: the same process answers the next call, and its status says what happened.
    await expect(s.call('echo', { text: 'after' })).resolves.toMatchObject({
      content: [{ type: 'text', text: 'echo after' }],
    });
    expect(s.host.status()[0]).toMatchObject({ state: 'ready', pid, restarts: 0 });
    expect(s.host.status()[0]?.lastError?.code).toBe('mcp_invalid_response');
  }, 120_000);

  it('a server that dies with the call in flight is mcp_server_crashed; the call queued behind it is mcp_server_unavailable and never reached it', async () => {
    const s = await start({ restartBaseMs: 1500, restartMaxMs: 1500 });
    await ready(s.host);
    // The crash call takes the server's one call slot; the echo waits behind it, in the runtime.
    const crash = s.call('crash', {});
    const queued = s.call('echo', { text: 'queued' });
    const [crashed, unavailable] = await Promise.allSettled([crash, queued]);
    expect(crashed).toMatchObject({
      status: 'rejected',
      reason: { code: 'mcp_server_crashed', message: expect.stringContaining('outcome is unknown') },
    });
    expect(unavailable).toMatchObject({
      status: 'rejected',
      reason: { code: 'mcp_server_unavailable', message: expect.stringContaining('did not run') },
    });
    // While it restarts, a new call does not reach it either.
    await expect(s.call('echo', { text: 'down' })).rejects.toMatchObject({ code: 'mcp_server_unavailable' });
    // The server's own journal: the crash call arrived, neither echo did.
    expect(s.log().filter((l) => l.startsWith('call'))).toEqual(['call crash']);
    // Safe to retry: once it is back, the same call runs, once.
    await eventually(
      () => s.host.status()[0]?.restarts === 1 && s.host.status()[0]?.state === 'ready',
      60_000,
      'restarted',
    );
    await expect(s.call('echo', { text: 'queued' })).resolves.toMatchObject({
      content: [{ type: 'text', text: 'echo queued' }],
    });
    expect(s.log().filter((l) => l.startsWith('call'))).toEqual(['call crash', 'call echo queued']);
  }, 120_000);

  // In bubblewrap and bare: bwrap's own processes keep their fds 0–2 open for their whole life,
  // so the server's pipes reach it on other fds (see `bwrapStdioArgs`); were they on bwrap's 0
  // and 1, the closed stdin would break no pipe and the call would wait for its time limit —
  // which is an hour here, so only a pipe that breaks ends it within the test's deadline.
  it.each([
    ['in bubblewrap', true],
    ['bare', false],
  ])(
    'a call written to a server whose stdin is already closed (a broken pipe) is mcp_server_unavailable and never reached it (%s)',
    async (_, sandbox) => {
      const s = await start({ restartBaseMs: 500, restartMaxMs: 500, callTimeoutMs: HOUR }, { sandbox });
      await ready(s.host);
      const pid = s.host.status()[0]?.pid;
      await expect(s.call('hangup', {})).resolves.toMatchObject({
        content: [{ type: 'text', text: 'hanging up' }],
      });
      // The server closed its end of the pipe and is still running: nothing tells the runtime
      // until its next write fails.
      await eventually(() => s.log().includes('stdin closed'), 60_000, 'server closed its stdin');
      expect(s.host.status()[0]).toMatchObject({ state: 'ready', pid });
      await expect(s.call('echo', { text: 'into the closed pipe' })).rejects.toMatchObject({
        code: 'mcp_server_unavailable',
        message: expect.stringContaining('did not run'),
      });
      // The server's own journal: the echo never arrived.
      expect(s.log().filter((l) => l.startsWith('call'))).toEqual(['call hangup']);
      // Safe to retry: a fresh process runs it, once.
      await eventually(
        () => s.host.status()[0]?.state === 'ready' && s.host.status()[0]?.pid !== pid,
        60_000,
        'a new server process',
      );
      // The live process without a connection was ended, not left as a server that answers nothing.
      expect(s.host.status()[0]).toMatchObject({
        restarts: 1,
        lastError: { message: expect.stringContaining('closed its connection') },
      });
      await expect(s.call('echo', { text: 'again' })).resolves.toMatchObject({
        content: [{ type: 'text', text: 'echo again' }],
      });
      expect(s.log().filter((l) => l.startsWith('call'))).toEqual(['call hangup', 'call echo again']);
    },
    120_000,
  );

  it('a server in bubblewrap that closes its stdout and lives on is seen at once: ended, and a call made then never reaches it', async () => {
    const s = await start({ restartBaseMs: HOUR, restartMaxMs: HOUR, callTimeoutMs: HOUR });
    await ready(s.host);
    await expect(s.call('closeout', {})).resolves.toMatchObject({
      content: [{ type: 'text', text: 'closing stdout' }],
    });
    await eventually(() => s.log().includes('stdout closed'), 60_000, 'server closed its stdout');
    // The end of its stdout reaches the runtime (bwrap holds no copy of it): the live process
    // without a connection is ended. Nothing else would tell the runtime: the server still reads.
    await eventually(
      () => s.host.status()[0]?.lastError?.message.includes('closed its connection') === true,
      60_000,
      'the closed connection seen',
    );
    await expect(s.call('echo', { text: 'after the close' })).rejects.toMatchObject({
      code: 'mcp_server_unavailable',
      message: expect.stringContaining('did not run'),
    });
    expect(s.log().filter((l) => l.startsWith('call'))).toEqual(['call closeout']);
    expect(s.host.status()[0]).toMatchObject({ restarts: 0 });
  }, 120_000);

  it('a server in bubblewrap that exits between calls: the next call is mcp_server_unavailable, not a wait', async () => {
    const s = await start({ restartBaseMs: HOUR, restartMaxMs: HOUR, callTimeoutMs: HOUR });
    await ready(s.host);
    await expect(s.call('quit', {})).resolves.toMatchObject({
      content: [{ type: 'text', text: 'quitting' }],
    });
    await eventually(() => s.host.status()[0]?.state !== 'ready', 60_000, 'the exit seen');
    expect(s.host.status()[0]?.lastError?.message).toContain('exited with code 0');
    await expect(s.call('echo', { text: 'after the exit' })).rejects.toMatchObject({
      code: 'mcp_server_unavailable',
      message: expect.stringContaining('did not run'),
    });
    expect(s.log().filter((l) => l.startsWith('call'))).toEqual(['call quit']);
  }, 120_000);
});
