// A three-server JetStream cluster on loopback, for trying cluster mode (`snotra dev-cluster`) and
// for the cluster tests (DESIGN.md §9): `nats-server` processes behind the runtime's lifeline (they
// die with the process that started them), client and monitoring ports chosen by the servers and
// read from their ports files, route ports picked free before the start (routes must be known up
// front: outside the kernel's ephemeral range, so no outgoing connection or port-0 listener of
// another process takes one between the pick and the bind; when one is taken all the same, the
// start begins again on fresh ports), one per-launch token read by every server from its environment (`$SNOTRA_NATS_TOKEN` in a
// 0600 config file; never in argv), store dirs under one folder. Readiness is a condition: every
// server reports the same JetStream meta leader with all peers current. Routes are loopback only
// and unauthenticated: this is a local cluster, not a deployment.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnWithLifeline, type LifelineChild } from '../bus/lifeline.ts';
import { resolveNatsBinary } from '../bus/nats-binary.ts';
import { signalGroup, waitForProcessGone } from '../bus/processes.ts';
import { TailBuffer } from '../bus/tail-buffer.ts';
import type { BusTarget } from '../bus/target.ts';
import {
  clusterConfigText,
  readClusterPorts,
  serverEnv,
  writeServerConfig,
  type ServerPorts,
} from './nats-cluster-config.ts';
import { generateNatsToken } from '../bus/nats-config.ts';

/** One server of the cluster as the tests see it. */
export interface ClusterServer {
  readonly name: string;
  /** `nats://127.0.0.1:<port>` while running (the same port after a restart). */
  readonly url: string;
  readonly running: boolean;
  readonly pid: number;
}

/** A running three-server cluster. */
export interface NatsCluster {
  readonly servers: readonly ClusterServer[];
  /** Every client URL: a client given all three fails over when one dies. */
  readonly urls: readonly string[];
  readonly dir: string;
  /** URLs and token for `connectBus` / a node's config (the token stays in this process). */
  target(): BusTarget;
  /** The token, for a child node's environment (the test passes it as a secret, never in argv). */
  token(): string;
  /** SIGKILLs one server (by index) and waits until its process is gone. */
  kill(index: number): Promise<void>;
  /** Starts a killed server again on the same ports and store dir; resolves once the meta leader is back with it current. */
  restart(index: number): Promise<void>;
  /** Resolves once every running server reports one meta leader and all running peers current. */
  waitForMetaLeader(timeoutMs?: number): Promise<string>;
  /** Stops every server (and removes the folder when it was a temporary one). */
  stop(): Promise<void>;
}

interface Slot {
  name: string;
  dir: string;
  configFile: string;
  routePort: number;
  ports: ServerPorts | null;
  child: LifelineChild | null;
  pid: number;
  running: boolean;
  stderr: TailBuffer;
  exited: Promise<void>;
}

/** Whether `port` can be bound on loopback now (closed again at once). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** The kernel's ephemeral port range (where port-0 listeners and outgoing connections get theirs). */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (lo !== undefined && hi !== undefined && lo > 0 && hi >= lo) return [lo, hi];
  } catch {
    // Not Linux: the IANA dynamic range.
  }
  return [49152, 65535];
}

/**
 * A free loopback TCP port for a route, below the ephemeral range (10000 up to it), not one of
 * `taken`: the server binds it a moment later, and nothing the kernel hands out meanwhile can be it.
 */
async function freeRoutePort(taken: readonly number[]): Promise<number> {
  const [lo] = ephemeralRange();
  const top = lo > 11_000 ? lo - 1 : 65_535;
  const bottom = lo > 11_000 ? 10_000 : 1024;
  for (let i = 0; i < 200; i++) {
    const port = bottom + Math.floor(Math.random() * (top - bottom + 1));
    if (!taken.includes(port) && (await bindable(port))) return port;
  }
  throw new Error('no free loopback port for a cluster route in 200 tries');
}

/** Whether a server's output says its route port was taken. */
const routePortTaken = (stderr: string): boolean =>
  /router port|route.*address already in use/i.test(stderr) && /address already in use/i.test(stderr);

/** Thrown by an `until` probe when waiting longer cannot help (the server exited). */
class GaveUp extends Error {}

async function until<T>(what: string, deadline: number, probe: () => Promise<T | null>): Promise<T> {
  let last: unknown = null;
  for (;;) {
    try {
      const v = await probe();
      if (v !== null) return v;
    } catch (err) {
      if (err instanceof GaveUp) throw err;
      last = err;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `${what} did not happen in time${last instanceof Error ? ` (last error: ${last.message})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Jsz {
  meta_cluster?: {
    leader?: string;
    cluster_size?: number;
    replicas?: { name: string; current: boolean; offline?: boolean }[];
  };
}

/** Options of {@link startLocalCluster}. */
export interface LocalClusterOptions {
  /** How long start-up may take. Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** Where the servers keep config and data (kept on stop). Default: a temp dir, removed on stop. */
  readonly dir?: string;
  /** The cluster's name. Default `snotra-dev`. */
  readonly clusterName?: string;
  /** Path or name of the `nats-server` binary. */
  readonly binary?: string;
  /** Picks a free route port not in `taken` (tests give one already bound). Default: free, below the ephemeral range. */
  readonly pickRoutePort?: (taken: readonly number[]) => Promise<number>;
}

/**
 * Starts three nats-server processes forming a JetStream cluster and resolves once a meta leader
 * is elected and every peer is current. Throws `nats_server_missing` without a binary, and an error
 * with the server's output (token scrubbed) when a server cannot start.
 */
export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<NatsCluster> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const binary = resolveNatsBinary(options.binary);
  const temporary = options.dir === undefined;
  if (options.dir !== undefined) mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const dir = realpathSync(options.dir ?? mkdtempSync(join(tmpdir(), 'snotra-nats-cluster-')));
  const clusterName = options.clusterName ?? 'snotra-dev';
  const token = generateNatsToken();
  /** The route ports, in slot order (a retried start picks them again). */
  let routePorts: number[] = [];
  /** Fresh slots on fresh route ports, their folders empty (nothing left of an earlier attempt). */
  const freshSlots = async (): Promise<Slot[]> => {
    routePorts = [];
    const pick = options.pickRoutePort ?? freeRoutePort;
    for (let i = 0; i < 3; i++) routePorts.push(await pick(routePorts));
    return ['n1', 'n2', 'n3'].map((name, i) => {
      const sdir = join(dir, name);
      rmSync(sdir, { recursive: true, force: true });
      return {
        name,
        dir: sdir,
        configFile: join(sdir, 'nats-server.conf'),
        routePort: routePorts[i] as number,
        ports: null,
        child: null,
        pid: -1,
        running: false,
        stderr: new TailBuffer(),
        exited: Promise.resolve(),
      };
    });
  };
  let slots: Slot[] = [];

  const launch = async (slot: Slot, deadline: number): Promise<void> => {
    writeServerConfig(
      slot.dir,
      slot.configFile,
      clusterConfigText({
        serverName: slot.name,
        clusterName,
        storeDir: slot.dir,
        routePort: slot.routePort,
        routes: routePorts,
        clientPort: slot.ports?.clientPort ?? -1,
        monitoring: true,
      }),
    );
    slot.stderr = new TailBuffer();
    const child = spawnWithLifeline(
      binary,
      ['-c', slot.configFile, '--ports_file_dir', slot.dir],
      serverEnv(token),
      2000,
      slot.dir,
    );
    slot.child = child;
    child.wrapper.stderr?.on('data', (c: Buffer) => slot.stderr.push(c));
    slot.running = true;
    slot.exited = new Promise((r) =>
      child.wrapper.once('exit', () => {
        slot.running = false;
        r();
      }),
    );
    slot.pid = await child.serverPid;
    slot.ports = await until(`ports file of ${slot.name}`, deadline, async () => {
      if (!slot.running)
        throw new GaveUp(`${slot.name} exited: ${slot.stderr.tail().replaceAll(token, '***')}`);
      return readClusterPorts(slot.dir, slot.pid);
    });
  };

  const waitForMetaLeader = async (t = timeoutMs): Promise<string> => {
    const deadline = Date.now() + t;
    return until('a JetStream meta leader with every running peer current', deadline, async () => {
      const live = slots.filter((s) => s.running && s.ports !== null);
      const leaders = new Set<string>();
      for (const s of live) {
        const res = await fetch(`${s.ports?.monitoringUrl}/jsz`, { signal: AbortSignal.timeout(2000) });
        const jsz = (await res.json()) as Jsz;
        const meta = jsz.meta_cluster;
        if (meta?.leader === undefined || meta.leader === '') return null;
        leaders.add(meta.leader);
        if (meta.leader === s.name) {
          // The leader lists the other peers: every running one must be current.
          const peers = meta.replicas ?? [];
          for (const o of live) {
            if (o.name === s.name) continue;
            const p = peers.find((r) => r.name === o.name);
            if (p === undefined || !p.current || p.offline === true) return null;
          }
        }
      }
      if (leaders.size !== 1) return null;
      const [leader] = [...leaders];
      return live.some((s) => s.name === leader) ? (leader as string) : null;
    });
  };

  const stopSlot = async (slot: Slot, signal: NodeJS.Signals): Promise<void> => {
    if (slot.child === null) return;
    if (slot.running) {
      // Before the wrapper has reported the server's pid there is only its group to signal
      // (never process.kill(-1): that is every process this user may signal).
      if (slot.pid > 0) {
        process.kill(slot.pid, signal);
        await waitForProcessGone(slot.pid, 10_000);
      }
      signalGroup(slot.child.pgid, 'SIGKILL');
      await slot.exited;
    }
    slot.child.wrapper.stdin?.destroy();
    slot.running = false;
  };

  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    slots = await freshSlots();
    const started = slots;
    try {
      // Settled, not raced: a failed server's siblings are all launched (or failed) before any is
      // stopped, so none is left starting behind the retry.
      const launched = await Promise.allSettled(started.map((s) => launch(s, deadline)));
      const failed = launched.find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      await waitForMetaLeader(Math.max(1, deadline - Date.now()));
      break;
    } catch (err) {
      await Promise.all(started.map((s) => stopSlot(s, 'SIGKILL')));
      // Another process bound a route port between its pick and the server's bind: again, on
      // other ports (the servers' state from this attempt is dropped with their folders).
      if (attempt < 3 && Date.now() < deadline && started.some((s) => routePortTaken(s.stderr.tail())))
        continue;
      if (temporary) rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  const view = (s: Slot): ClusterServer => ({
    name: s.name,
    get url() {
      return `nats://127.0.0.1:${s.ports?.clientPort ?? 0}`;
    },
    get running() {
      return s.running;
    },
    get pid() {
      return s.pid;
    },
  });
  const urls = slots.map((s) => `nats://127.0.0.1:${s.ports?.clientPort ?? 0}`);
  return {
    servers: slots.map(view),
    urls,
    dir,
    target: () => ({ url: urls, credentials: { token } }),
    token: () => token,
    kill: async (i) => {
      const slot = slots[i];
      if (slot === undefined) throw new Error(`no server #${i}`);
      await stopSlot(slot, 'SIGKILL');
    },
    restart: async (i) => {
      const slot = slots[i];
      if (slot === undefined) throw new Error(`no server #${i}`);
      if (slot.running) throw new Error(`server ${slot.name} is running`);
      await launch(slot, Date.now() + timeoutMs);
      await waitForMetaLeader();
    },
    waitForMetaLeader,
    stop: async () => {
      await Promise.all(slots.map((s) => stopSlot(s, 'SIGTERM')));
      if (temporary) rmSync(dir, { recursive: true, force: true });
    },
  };
}
