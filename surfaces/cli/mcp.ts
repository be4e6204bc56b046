import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import {
  type LoadedConfig,
  LOG_LEVELS,
  modelFromConfig,
  resolveConfig,
  Runtime,
  secretStoreFromConfig,
  StateDirLockedError,
} from '../../runtime/index.ts';
import { createMcpServer } from '../mcp/server.ts';
import { McpSurface } from '../mcp/service.ts';
import { MAX_WAIT_MS } from '../mcp/schemas.ts';
import { takeSidecarToken } from '../sidecar/auth.ts';
import { startSidecar, type Sidecar } from '../sidecar/server.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { packageVersion } from './package-root.ts';
import { logLevelOf } from './start.ts';

const USAGE =
  `usage: snotra mcp [--config F] [--state-dir D] [--wait-ms N] [--log-level ${LOG_LEVELS.join('|')}]` +
  '  (an MCP server on stdin/stdout; logs on stderr)';

/** How long `run_task` waits for the answer by default (Claude Desktop gives a tool call about a minute). */
export const DEFAULT_WAIT_MS = 25_000;

/**
 * Makes stdout the protocol's alone: returns a stream onto the real stdout for the MCP
 * transport, and sends everything else written to `process.stdout` (console output of any
 * module, a stray print) to stderr instead. The runtime's children never inherit stdout (they
 * get pipes), so nothing but JSON-RPC messages reaches the client.
 */
function claimStdout(): Writable {
  const write = process.stdout.write.bind(process.stdout) as (
    chunk: unknown,
    cb: (e?: Error | null) => void,
  ) => boolean;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) =>
    (process.stderr.write as (...a: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;
  return new Writable({
    write(chunk, _enc, cb) {
      write(chunk, cb);
    },
  });
}

function waitMsOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WAIT_MS;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n > MAX_WAIT_MS)
    throw new UsageError(
      `--wait-ms: expected a whole number of ms from 0 to ${MAX_WAIT_MS}, got ${JSON.stringify(text)}\n${USAGE}`,
    );
  return n;
}

/** The config with `--state-dir` over its state dir. */
function withStateDir(loaded: LoadedConfig, stateDir: string | undefined, cwd: string): LoadedConfig {
  if (stateDir === undefined) return loaded;
  return { ...loaded, config: { ...loaded.config, stateDir: resolve(cwd, stateDir) } };
}

/**
 * `snotra mcp`: the runtime as an MCP server over stdio, for a client that launches it (Claude
 * Desktop, an IDE). It starts its own runtime on the config's state dir (or `--state-dir`), like
 * `snotra start`: one runtime per state dir, so with a runtime already running there it exits 1
 * with `state_dir_locked` naming the holder. Approvals of its runs wait in that state dir's
 * Inbox, for `snotra inbox approve|deny --state-dir D` (or its sidecar). It ends when the client
 * closes stdin, or on SIGINT/SIGTERM, stopping the runtime and every child it started.
 */
export async function mcpCommand(argv: string[], _io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        'state-dir': { type: 'string' },
        'wait-ms': { type: 'string' },
        'log-level': { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const waitMs = waitMsOf(values['wait-ms']);
  const logLevel = logLevelOf(values['log-level'], process.env.SNOTRA_LOG_LEVEL);
  const protocolOut = claimStdout();
  const sidecarToken = takeSidecarToken(process.env);
  const loaded = withStateDir(resolveConfig(values.config, cwd), values['state-dir'], cwd);

  let ended: (why: string) => void = () => {};
  const end = new Promise<string>((r) => (ended = r));
  const onInt = () => ended('SIGINT');
  const onTerm = () => ended('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const onStdinEnd = () => ended('stdin closed');
  process.stdin.once('end', onStdinEnd);
  process.stdin.once('close', onStdinEnd);
  let runtime: Runtime;
  try {
    runtime = await Runtime.start({
      loaded,
      model: modelFromConfig(loaded),
      secretStore: secretStoreFromConfig(loaded),
      logLevel,
      logDestination: process.stderr,
    });
  } catch (err) {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    if (err instanceof StateDirLockedError) {
      throw new CommandFailure(
        err.code,
        `${err.message} \`snotra mcp\` runs its own runtime: stop the other one, or give this server its own ` +
          'state dir with --state-dir D (then decide its approvals with `snotra inbox … --state-dir D`).',
      );
    }
    throw err;
  }
  let sidecar: Sidecar | null = null;
  try {
    const sc = loaded.config.sidecar;
    if (sc.enabled) {
      sidecar = await startSidecar({
        runtime,
        token: sidecarToken,
        port: sc.port,
        allowedOrigins: sc.allowedOrigins,
        ...(sc.limits === undefined ? {} : { limits: sc.limits }),
      });
    }
    const surface = new McpSurface(runtime, waitMs);
    const version = packageVersion();
    const handle = serveStdio(() => createMcpServer(surface, version), {
      transport: new StdioServerTransport(process.stdin, protocolOut),
      onerror: (err) => runtime.node.logger.warn({ err: err.message }, 'mcp connection error'),
    });
    // The line `snotra start` prints on stdout, here on stderr (stdout is the protocol's).
    process.stderr.write(
      `${JSON.stringify({
        event: 'ready',
        surface: 'mcp',
        pid: process.pid,
        config: loaded.file,
        stateDir: loaded.config.stateDir,
        agents: surface.agents(),
        sidecar: sidecar?.url ?? null,
        waitMs,
      })}\n`,
    );
    const why = await end;
    runtime.node.logger.info({ why }, 'mcp server stopping');
    await handle.close().catch(() => {});
    return ExitCode.ok;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.stdin.off('end', onStdinEnd);
    process.stdin.off('close', onStdinEnd);
    await sidecar?.close();
    await runtime.stop();
    process.stdin.destroy();
  }
}
