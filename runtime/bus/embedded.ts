import { connect, errors as natsErrors, jwtAuthenticator } from '@nats-io/transport-node';
import type { ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { resolve } from 'node:path';
import { BusError, BusErrorCode, scrubSecrets } from './errors.ts';
import { spawnWithLifeline } from './lifeline.ts';
import { loggableError, silentLogger, type BusLogger } from './logger.ts';
import { resolveNatsBinary } from './nats-binary.ts';
import { generateNatsToken, natsChildEnv, natsPaths, writeNatsConfig } from './nats-config.ts';
import { removeStalePortsFiles, waitForPortsFile } from './ports-file.ts';
import { signalGroup, waitForProcessGone } from './processes.ts';
import { TailBuffer } from './tail-buffer.ts';
import type { BusCredentials, BusTarget } from './target.ts';

/** Options of {@link startEmbeddedNats}. */
export interface EmbeddedNatsOptions {
  /** The runtime's state dir; the server's files go to `<stateDir>/nats` (JetStream data in `nats/jetstream`). */
  readonly stateDir: string;
  /** Path or name of the `nats-server` binary. Default: `nats-server` on PATH, then the usual install folders. */
  readonly binary?: string;
  /** How long start-up may take until a client can connect. Default 10 000 ms. */
  readonly startTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL in `stop()` (and in the lifeline). Default 5000 ms. */
  readonly stopGraceMs?: number;
  /** Where start, stop and unexpected exits are logged. Default: silent. */
  readonly logger?: BusLogger;
  /** Called once when the server exits for any reason; `expected` is false unless `stop()` asked for it. */
  readonly onExit?: (info: NatsExitInfo) => void;
  /**
   * Per-actor auth (`runtime/bus/auth`): the operator-mode config lines that replace the token,
   * and the gateway's credentials, used by the start probe and returned by `target()`.
   */
  readonly auth?: { readonly configLines: readonly string[]; readonly credentials: BusCredentials };
}

/** How the embedded server ended. */
export interface NatsExitInfo {
  /** Exit code of the server (null when it died by a signal). */
  readonly code: number | null;
  /** The signal that ended it, e.g. `SIGTERM` (null after a normal exit). */
  readonly signal: string | null;
  /** True when `stop()` requested the exit. */
  readonly expected: boolean;
  /** The last lines of its stderr, token scrubbed. */
  readonly stderrTail: string;
}

/** A running embedded nats-server. Holds the token privately: it is not a property, so it cannot leak through logging the object. */
export interface EmbeddedNats {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  /** The loopback port the server chose. */
  readonly port: number;
  /** The server's pid. */
  readonly pid: number;
  /** The process group of the lifeline wrapper and the server. */
  readonly pgid: number;
  /** The 0600 config file (it references `$SNOTRA_NATS_TOKEN`, never the token). */
  readonly configFile: string;
  /** Where JetStream keeps its data. */
  readonly jetstreamDir: string;
  /** True until the server has exited. */
  readonly running: boolean;
  /** Resolves when the server has exited (expected or not). */
  readonly exited: Promise<NatsExitInfo>;
  /** URL and token to pass to `connectBus`; the only way to obtain the token. */
  target(): BusTarget;
  /** SIGTERM to the process group, SIGKILL after the grace period; resolves once the server is gone. Idempotent. */
  stop(): Promise<NatsExitInfo>;
}

function exitInfo(
  code: number | null,
  signal: NodeJS.Signals | null,
): { code: number | null; signal: string | null } {
  if (signal !== null) return { code: null, signal };
  // The lifeline exits with 128+n when the server died by signal n.
  if (code !== null && code > 128 && code < 128 + 65) {
    const name = Object.entries(osConstants.signals).find(([, n]) => n === code - 128)?.[0];
    if (name !== undefined) return { code: null, signal: name };
  }
  return { code, signal: null };
}

async function probeConnect(
  url: string,
  credentials: BusCredentials,
  deadline: number,
  alive: () => boolean,
): Promise<void> {
  const auth =
    'jwt' in credentials
      ? { authenticator: jwtAuthenticator(credentials.jwt, credentials.seed) }
      : credentials;
  for (;;) {
    try {
      const nc = await connect({
        servers: url,
        ...auth,
        reconnect: false,
        timeout: Math.max(100, Math.min(2000, deadline - Date.now())),
        name: 'snotra-start-probe',
      });
      await nc.close();
      return;
    } catch (err) {
      if (err instanceof natsErrors.AuthorizationError) throw err;
      if (!alive() || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/**
 * Starts a private nats-server for this runtime and resolves once a client can connect to it.
 *
 * Guarantees: it listens on 127.0.0.1 only, on a random port; it requires a fresh 256-bit token that
 * exists only in this process and in the server's environment (never in argv, files or logs); its
 * config file has mode 0600; its environment is PATH/HOME/LANG/TMPDIR plus the token; it runs in its
 * own process group behind a lifeline that kills it when this process dies, even by SIGKILL.
 *
 * Errors (all {@link BusError}, token-free): `nats_server_missing` (with the install hint),
 * `nats_server_start_failed` (it exited during start-up; the message has the tail of its stderr),
 * `nats_server_start_timeout`, `nats_unsupported_platform` (Windows), `nats_invalid_state_dir` (a path the
 * config syntax cannot carry, or a state dir that cannot be written).
 */
export async function startEmbeddedNats(options: EmbeddedNatsOptions): Promise<EmbeddedNats> {
  if (process.platform === 'win32') {
    throw new BusError(
      BusErrorCode.UnsupportedPlatform,
      'the embedded nats-server needs a POSIX shell; on Windows configure bus.url to use an existing NATS server',
    );
  }
  const logger = options.logger ?? silentLogger;
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const graceMs = options.stopGraceMs ?? 5000;
  const binary = resolveNatsBinary(options.binary);
  const paths = natsPaths(resolve(options.stateDir));
  try {
    writeNatsConfig(paths, options.auth?.configLines);
  } catch (err) {
    if (err instanceof BusError) throw err;
    const errno = (err as NodeJS.ErrnoException).code ?? 'unknown';
    throw new BusError(
      BusErrorCode.InvalidStateDir,
      `cannot write the nats-server config under ${paths.root} (${errno})`,
      {
        cause: err,
        details: { errno },
      },
    );
  }
  removeStalePortsFiles(paths.portsDir);

  const token = generateNatsToken();
  const credentials: BusCredentials = options.auth?.credentials ?? { token };
  const scrub = (s: string): string => scrubSecrets(s, [token]);
  const deadline = Date.now() + startTimeoutMs;
  const child = spawnWithLifeline(
    binary,
    ['-c', paths.configFile, '--ports_file_dir', paths.portsDir],
    natsChildEnv(token),
    graceMs,
    paths.root,
  );
  const wrapper: ChildProcess = child.wrapper;
  const stderr = new TailBuffer();
  wrapper.stderr?.on('data', (c: Buffer) => stderr.push(c));

  let stopping = false;
  let running = true;
  let serverPid = -1;
  const exited = new Promise<NatsExitInfo>((resolveExit) => {
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      running = false;
      // Whatever is left of the group (the lifeline watcher, or the server if the wrapper was killed).
      signalGroup(child.pgid, 'SIGKILL');
      wrapper.stdin?.destroy();
      const info: NatsExitInfo = {
        ...exitInfo(code, signal),
        expected: stopping,
        stderrTail: scrub(stderr.tail()),
      };
      resolveExit(info);
    };
    wrapper.once('exit', finish);
    wrapper.once('error', () => finish(null, null));
  });
  void exited.then((info) => {
    if (!info.expected) {
      logger.error(
        { natsPid: serverPid, code: info.code, signal: info.signal, stderrTail: info.stderrTail },
        'bus: embedded nats-server exited unexpectedly',
      );
    } else {
      logger.info(
        { natsPid: serverPid, code: info.code, signal: info.signal },
        'bus: embedded nats-server stopped',
      );
    }
    try {
      options.onExit?.(info);
    } catch (err) {
      logger.error({ err: loggableError(err) }, 'bus: onExit callback threw');
    }
  });

  const fail = async (code: BusErrorCode, what: string, cause?: unknown): Promise<never> => {
    stopping = true;
    signalGroup(child.pgid, 'SIGKILL');
    const info = await exited;
    const tail = info.stderrTail === '' ? '(no output)' : info.stderrTail;
    throw new BusError(code, scrub(`${what}. Last output of nats-server:\n${tail}`), {
      cause: cause instanceof Error ? new Error(scrub(cause.message)) : undefined,
      details: { code: info.code, signal: info.signal },
    });
  };

  const timeLeft = (): number => Math.max(0, deadline - Date.now());
  serverPid = await Promise.race([
    child.serverPid.catch(() => -1),
    new Promise<number>((r) => setTimeout(() => r(-2), timeLeft()).unref()),
  ]);
  if (serverPid === -1) return fail(BusErrorCode.NatsServerStartFailed, 'nats-server could not be started');
  if (serverPid === -2) {
    return fail(BusErrorCode.NatsServerStartTimeout, `nats-server did not start within ${startTimeoutMs} ms`);
  }
  // Looked for as the server logs (it writes the file as its listeners open), else every 50 ms.
  const listen = await waitForPortsFile(
    paths.portsDir,
    serverPid,
    deadline,
    () => running,
    (wake) => {
      wrapper.stderr?.on('data', wake);
      return () => wrapper.stderr?.off('data', wake);
    },
    50,
  );
  if (listen === null) {
    if (!running) return fail(BusErrorCode.NatsServerStartFailed, 'nats-server exited during start-up');
    return fail(
      BusErrorCode.NatsServerStartTimeout,
      `nats-server did not report a loopback port within ${startTimeoutMs} ms`,
    );
  }
  try {
    await probeConnect(listen.url, credentials, deadline, () => running);
  } catch (err) {
    if (!running) return fail(BusErrorCode.NatsServerStartFailed, 'nats-server exited during start-up', err);
    return fail(
      BusErrorCode.NatsServerStartTimeout,
      `nats-server did not accept connections within ${startTimeoutMs} ms`,
      err,
    );
  }
  logger.info(
    { natsPid: serverPid, port: listen.port, jetstreamDir: `${paths.storeDir}/jetstream` },
    'bus: embedded nats-server started',
  );

  let stopPromise: Promise<NatsExitInfo> | undefined;
  const stop = (): Promise<NatsExitInfo> => {
    stopPromise ??= (async () => {
      if (running) {
        stopping = true;
        signalGroup(child.pgid, 'SIGTERM');
      }
      const timer = setTimeout(() => signalGroup(child.pgid, 'SIGKILL'), graceMs);
      const info = await exited;
      clearTimeout(timer);
      await waitForProcessGone(serverPid, 2000);
      return info;
    })();
    return stopPromise;
  };

  const pid = serverPid;
  return Object.freeze({
    url: listen.url,
    port: listen.port,
    pid,
    pgid: child.pgid,
    configFile: paths.configFile,
    jetstreamDir: `${paths.storeDir}/jetstream`,
    get running() {
      return running;
    },
    exited,
    target: (): BusTarget => ({ url: listen.url, credentials }),
    stop,
  });
}
