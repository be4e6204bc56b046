import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { AUTH_TIMEOUT_SECONDS, natsChildEnv, TOKEN_ENV } from '../bus/nats-config.ts';

/** What one server of a local cluster is configured with. */
export interface ClusterServerConfig {
  /** Unique `server_name` (JetStream clustering needs one per server). */
  readonly serverName: string;
  readonly clusterName: string;
  /** JetStream `store_dir` (the data lands in `<storeDir>/jetstream`). */
  readonly storeDir: string;
  /** This server's route (cluster) port on 127.0.0.1. */
  readonly routePort: number;
  /** Every server's route port (this one's included: nats-server ignores a route to itself). */
  readonly routes: readonly number[];
  /** The client port; -1 lets the server pick one (read it from the ports file). */
  readonly clientPort: number;
  /** Also listen for HTTP monitoring on a random loopback port (tests read `/jsz` for the meta leader). */
  readonly monitoring?: boolean;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function quotedPath(path: string): string {
  if (/[\p{Cc}"\\$]/u.test(path)) {
    throw new Error(
      `the store dir ${JSON.stringify(path)} contains a character a nats-server config cannot carry (", \\, $ or a control character)`,
    );
  }
  return `"${path}"`;
}

function port(p: number, what: string, allowRandom: boolean): string {
  if (allowRandom && p === -1) return '-1';
  if (!Number.isInteger(p) || p < 1 || p > 65535) throw new Error(`${what} must be a TCP port, got ${p}`);
  return String(p);
}

/**
 * The config text of one cluster server: loopback only, token auth read from `$SNOTRA_NATS_TOKEN`
 * (the server refuses to start without it), JetStream on, routes to every peer on loopback.
 */
export function clusterConfigText(c: ClusterServerConfig): string {
  if (!NAME.test(c.serverName))
    throw new Error(`server name ${JSON.stringify(c.serverName)} must match ${NAME}`);
  if (!NAME.test(c.clusterName))
    throw new Error(`cluster name ${JSON.stringify(c.clusterName)} must match ${NAME}`);
  const routes = c.routes.map((p) => `"nats-route://127.0.0.1:${port(p, 'a route port', false)}"`);
  return [
    '# Written by Snotra Runtime. The token is never stored here: it is read from the server',
    `# environment ($${TOKEN_ENV}).`,
    `server_name: ${c.serverName}`,
    `listen: 127.0.0.1:${port(c.clientPort, 'the client port', true)}`,
    ...(c.monitoring === true ? ['http: 127.0.0.1:-1'] : []),
    `authorization { token: $${TOKEN_ENV}, timeout: ${AUTH_TIMEOUT_SECONDS} }`,
    `jetstream { store_dir: ${quotedPath(c.storeDir)} }`,
    'cluster {',
    `  name: ${c.clusterName}`,
    `  listen: 127.0.0.1:${port(c.routePort, 'the route port', false)}`,
    `  routes: [ ${routes.join(', ')} ]`,
    '}',
    '',
  ].join('\n');
}

/** Writes a server's config with mode 0600 (exclusive temp file, renamed over the old one); the folder gets 0700. */
export function writeServerConfig(dir: string, file: string, text: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, text, { flag: 'wx', mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** The complete environment of a cluster server: PATH/HOME/LANG/TMPDIR and the token. */
export function serverEnv(token: string): Record<string, string> {
  return natsChildEnv(token);
}

/** The ports a server reported in its ports file. */
export interface ServerPorts {
  readonly clientPort: number;
  readonly clientUrl: string;
  /** `http://127.0.0.1:<port>` when monitoring is on, else null. */
  readonly monitoringUrl: string | null;
}

const PortsFile = z.object({ nats: z.array(z.string()).min(1), monitoring: z.array(z.string()).optional() });

/** Reads `nats-server_<pid>.ports` under `dir`; null until it is complete and names a loopback client port. */
export function readClusterPorts(dir: string, pid: number): ServerPorts | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dir, `nats-server_${pid}.ports`), 'utf8'));
  } catch {
    return null;
  }
  const parsed = PortsFile.safeParse(raw);
  if (!parsed.success) return null;
  const client = parsed.data.nats
    .map((u) => /^nats:\/\/127\.0\.0\.1:(\d{1,5})$/.exec(u))
    .find((m) => m !== null);
  if (client === undefined || client === null) return null;
  const mon = (parsed.data.monitoring ?? []).find((u) => /^http:\/\/127\.0\.0\.1:\d{1,5}$/.test(u)) ?? null;
  return { clientPort: Number(client[1]), clientUrl: client[0], monitoringUrl: mon };
}
