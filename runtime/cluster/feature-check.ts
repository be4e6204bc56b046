import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ClusterError, ClusterErrorCode } from './errors.ts';

/** The oldest nats-server cluster mode runs on: KV compare-and-swap, bucket `max_age`, direct get. */
export const MIN_SERVER_VERSION = [2, 9, 0] as const;

/** What the server said about itself at connect. */
export interface ServerFacts {
  readonly version: string;
  readonly cluster: string;
  /** Servers of the cluster that announced a client URL to this client (itself included). */
  readonly knownServers: number;
}

/** `2.9.10` → [2, 9, 10]; null for anything else. */
export function parseVersion(v: string): [number, number, number] | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v);
  return m === null ? null : [Number(m[1]), Number(m[2]), Number(m[3])];
}

function atLeast(v: readonly number[], min: readonly number[]): boolean {
  for (let i = 0; i < min.length; i++) {
    const a = v[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * Checks at connect that the server can carry cluster mode, and fails with what is missing:
 * a version at least 2.9.0 (`cluster_unsupported_server`), JetStream on for this account
 * (`cluster_no_jetstream`), and clustering (`cluster_not_clustered`: replicated buckets need a
 * JetStream cluster; a single server would hold every node's shared state alone). Features of
 * 2.11+ (per-key TTL, consumer pinning, delayed messages) are not used.
 */
export async function checkClusterServer(nc: NatsConnection, where: string): Promise<ServerFacts> {
  const info = nc.info;
  if (info === undefined)
    throw new ClusterError(ClusterErrorCode.UnsupportedServer, `${where}: no server info after connect`);
  const version = parseVersion(info.version);
  if (version === null || !atLeast(version, MIN_SERVER_VERSION)) {
    throw new ClusterError(
      ClusterErrorCode.UnsupportedServer,
      `${where}: nats-server ${info.version} is too old for cluster mode; it needs ${MIN_SERVER_VERSION.join('.')} or newer`,
    );
  }
  if (info.jetstream !== true) {
    throw new ClusterError(
      ClusterErrorCode.NoJetStream,
      `${where}: nats-server ${info.version} has JetStream off; cluster mode keeps runs, the Inbox and claims in JetStream (enable it with a jetstream { } block)`,
    );
  }
  if (info.cluster === undefined || info.cluster === '') {
    throw new ClusterError(
      ClusterErrorCode.NotClustered,
      `${where}: nats-server ${info.version} is not part of a cluster; cluster mode needs a JetStream cluster of three servers (see docs/cluster.md or \`snotra dev-cluster\`)`,
    );
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5000 });
    await jsm.getAccountInfo();
  } catch (err) {
    throw new ClusterError(
      ClusterErrorCode.NoJetStream,
      `${where}: JetStream is not available to this account (${(err as Error).message})`,
      { cause: err },
    );
  }
  return { version: info.version, cluster: info.cluster, knownServers: 1 + (info.connect_urls?.length ?? 0) };
}
