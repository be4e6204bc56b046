import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusError, BusErrorCode } from './errors.ts';

/** Name of the environment variable that carries the per-launch token to the server (and only there). */
export const TOKEN_ENV = 'SNOTRA_NATS_TOKEN';

/**
 * A fresh 256-bit token: `snotra_` + 64 hex digits. The letter prefix matters: nats-server parses the
 * value of a `$VARIABLE` as config syntax, and a value starting with a digit would be read as a number.
 */
export function generateNatsToken(): string {
  return `snotra_${randomBytes(32).toString('hex')}`;
}

/** A path as a double-quoted nats config string; refuses characters the config syntax cannot carry. */
function quote(path: string): string {
  if (/[\p{Cc}"\\$]/u.test(path)) {
    throw new BusError(
      BusErrorCode.InvalidStateDir,
      'the state dir path contains a character that cannot be written to a nats-server config file (", \\, $ or a control character)',
    );
  }
  return `"${path}"`;
}

/**
 * Seconds a client has, from its TCP connect, to send CONNECT with valid credentials. nats-server's
 * default is 2 s: on a loaded desktop (a build, a browser, a second runtime) a runtime that was
 * starting up missed it and failed with `Authentication Timeout`. Loopback only, so a longer wait
 * costs nothing an outsider could use.
 */
export const AUTH_TIMEOUT_SECONDS = 10;

/**
 * The text of the server config: loopback only with a random port, token auth read from
 * `$SNOTRA_NATS_TOKEN` (the server refuses to start when it is unset — fail closed) and a client
 * given {@link AUTH_TIMEOUT_SECONDS} to authenticate, JetStream with
 * its store under `jetstreamDir` (nats-server appends `/jetstream` to `store_dir`).
 */
export function natsConfigText(storeDir: string, authLines?: readonly string[]): string {
  return [
    '# Written by Snotra Runtime for each launch. The token is never stored here: it is read from the',
    `# server's environment ($${TOKEN_ENV}).`,
    'listen: 127.0.0.1:-1',
    // Per-actor auth (runtime/bus/auth) replaces the token by operator-mode lines: public JWTs only.
    ...(authLines === undefined
      ? [`authorization { token: $${TOKEN_ENV}, timeout: ${AUTH_TIMEOUT_SECONDS} }`]
      : [`authorization { timeout: ${AUTH_TIMEOUT_SECONDS} }`, ...authLines]),
    `jetstream { store_dir: ${quote(storeDir)} }`,
    '',
  ].join('\n');
}

/** Where the embedded server keeps its files under the state dir. */
export interface NatsPaths {
  /** `<stateDir>/nats` — mode 0700. */
  readonly root: string;
  /** The config file, mode 0600. */
  readonly configFile: string;
  /** `--ports_file_dir`: the server writes `nats-server_<pid>.ports` here. */
  readonly portsDir: string;
  /** JetStream `store_dir`; the data lands in `<stateDir>/nats/jetstream`. */
  readonly storeDir: string;
}

/** The {@link NatsPaths} of a state dir (no I/O). */
export function natsPaths(stateDir: string): NatsPaths {
  const root = join(stateDir, 'nats');
  return { root, configFile: join(root, 'nats-server.conf'), portsDir: join(root, 'run'), storeDir: root };
}

/**
 * Creates the folders (mode 0700) and writes the config file with mode 0600, atomically (a new file
 * created exclusively with mode 0600, then renamed over the old one, so a pre-existing file with looser
 * permissions is replaced, never reused).
 */
export function writeNatsConfig(paths: NatsPaths, authLines?: readonly string[]): void {
  const text = natsConfigText(paths.storeDir, authLines);
  mkdirSync(paths.root, { recursive: true, mode: 0o700 });
  mkdirSync(paths.portsDir, { recursive: true, mode: 0o700 });
  chmodSync(paths.root, 0o700);
  const tmp = `${paths.configFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, text, { flag: 'wx', mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, paths.configFile);
}

/** Variables copied from the parent into the server's environment (DESIGN.md §10); nothing else passes. */
const ENV_ALLOWLIST = ['PATH', 'HOME', 'LANG', 'TMPDIR'] as const;

/** The complete environment of the server child: the allowlisted variables plus the token. */
export function natsChildEnv(token: string, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ENV_ALLOWLIST) {
    const v = parent[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH ??= '/usr/bin:/bin';
  env[TOKEN_ENV] = token;
  return env;
}
