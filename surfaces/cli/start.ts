import { parseArgs } from 'node:util';
import {
  LOG_LEVELS,
  type LogLevel,
  modelFromConfig,
  resolveConfig,
  Runtime,
  secretStoreFromConfig,
  type LoadedConfig,
} from '../../runtime/index.ts';
import { takeSidecarToken } from '../sidecar/auth.ts';
import { startSidecar, type Sidecar } from '../sidecar/server.ts';
import { startPlatforms, type Platforms } from '../platforms/index.ts';
import { startJoinServer, type JoinServer } from '../join/server.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';
import { logOutput } from './log-output.ts';

const USAGE = `usage: snotra start [--config F] [--log-level ${LOG_LEVELS.join('|')}]  (or SNOTRA_LOG_LEVEL)`;

/**
 * `snotra start`: runs the runtime until SIGINT/SIGTERM. Prints one JSON line
 * `{"event":"ready",...}` once it accepts work (never a token), and `{"event":"stopped"}` at the end.
 */
export async function startCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { config: { type: 'string' }, 'log-level': { type: 'string' } },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const logLevel = logLevelOf(values['log-level'], process.env.SNOTRA_LOG_LEVEL);
  const logDestination = logOutput();
  // Before anything spawns a child: the launcher's token leaves the environment here.
  const sidecarToken = takeSidecarToken(process.env);
  const loaded = resolveConfig(values.config, cwd);
  // Handlers first: a signal at any moment of boot or right at the ready line stops gracefully.
  let signalled: (name: string) => void = () => {};
  let received: string | null = null;
  const stopSignal = new Promise<string>((resolve) => {
    signalled = resolve;
  });
  const onSignal = (name: string) => () => {
    received ??= name;
    signalled(name);
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    const runtime = await Runtime.start({
      loaded,
      model: modelFromConfig(loaded),
      secretStore: secretStoreFromConfig(loaded),
      platforms: true,
      logLevel,
      ...(logDestination === undefined ? {} : { logDestination }),
    });
    let sidecar: Sidecar | null = null;
    let platforms: Platforms | null = null;
    let joined: JoinServer | null = null;
    try {
      sidecar = await sidecarOf(runtime, loaded.config.sidecar, sidecarToken);
      // The URL only: the token is never logged.
      if (sidecar !== null) runtime.node.logger.info({ url: sidecar.url }, 'sidecar listening');
      platforms = await startPlatforms(runtime);
      // Last: a surface that joins finds everything it may use already running.
      const web = sidecar;
      joined = await startJoinServer({
        runtime,
        stateDir: loaded.config.stateDir,
        agents: Object.keys(loaded.config.agents),
        ...(web === null ? {} : { login: () => web.loginUrl() }),
      });
    } catch (err) {
      await platforms?.close();
      await sidecar?.close();
      await runtime.stop();
      throw err;
    }
    if (received === null) {
      const sandbox = runtime.read.sandbox();
      io.stdout(
        `${JSON.stringify({
          event: 'ready',
          pid: process.pid,
          config: loaded.file,
          stateDir: loaded.config.stateDir,
          agents: Object.keys(loaded.config.agents),
          roots: loaded.config.workspace.roots.map((r) => ({ id: r.id, path: r.path, access: r.access })),
          sidecar: sidecar?.url ?? null,
          platforms: loaded.config.surfaces.platforms.map((p) => p.id),
          // The OS sandbox shell and git children run in; without one, why (and allow-mode shell asks a human).
          sandbox: sandbox.name,
          ...(sandbox.reason === undefined ? {} : { sandboxReason: sandbox.reason }),
        })}\n`,
      );
    }
    const signal = await stopSignal;
    await joined.close();
    await platforms.close();
    await sidecar?.close();
    await runtime.stop();
    io.stdout(`${JSON.stringify({ event: 'stopped', signal })}\n`);
    return ExitCode.ok;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

/** Starts the sidecar unless `sidecar.enabled` is false. */
function sidecarOf(
  runtime: Runtime,
  config: LoadedConfig['config']['sidecar'],
  token: string,
): Promise<Sidecar | null> {
  if (!config.enabled) return Promise.resolve(null);
  return startSidecar({
    runtime,
    token,
    port: config.port,
    allowedOrigins: config.allowedOrigins,
    ...(config.limits === undefined ? {} : { limits: config.limits }),
  });
}

/** The log level from `--log-level`, else `SNOTRA_LOG_LEVEL`, else `info`; a bad one is a usage error naming where it came from. */
export function logLevelOf(flag: string | undefined, env: string | undefined): LogLevel {
  const [value, where] =
    flag !== undefined
      ? [flag, '--log-level']
      : env !== undefined && env !== ''
        ? [env, 'SNOTRA_LOG_LEVEL']
        : ['info', ''];
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new UsageError(
    `${where}: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(value)}\n${USAGE}`,
  );
}
