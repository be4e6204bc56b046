import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedNats } from '../../runtime/bus/embedded.ts';
import { spawnWithLifeline } from '../../runtime/bus/lifeline.ts';
import { resolveNatsBinary } from '../../runtime/bus/nats-binary.ts';
import { generateNatsToken } from '../../runtime/bus/nats-config.ts';
import { signalGroup } from '../../runtime/bus/processes.ts';
import { checkClusterServer, parseVersion } from '../../runtime/cluster/feature-check.ts';
import { startLocalCluster } from '../../runtime/cluster/local-cluster.ts';
import { readClusterPorts, serverEnv, writeServerConfig } from '../../runtime/cluster/nats-cluster-config.ts';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.ts';

let cluster: NatsCluster;
const open: NatsConnection[] = [];
beforeAll(async () => {
  cluster = await startNatsCluster();
});
afterAll(async () => {
  for (const nc of open) await nc.close().catch(() => {});
  await cluster?.stop();
});

async function client(servers: string | readonly string[], token: string): Promise<NatsConnection> {
  const nc = await connect({
    servers: [...(typeof servers === 'string' ? [servers] : servers)],
    token,
    timeout: 5000,
  });
  open.push(nc);
  return nc;
}

describe('the three-server test cluster', () => {
  it('forms a JetStream cluster with token auth from a 0600 config; the token is in no file and no argv', async () => {
    expect(cluster.servers).toHaveLength(3);
    for (const s of cluster.servers) {
      const conf = join(cluster.dir, s.name, 'nats-server.conf');
      expect(statSync(conf).mode & 0o777).toBe(0o600);
      const text = readFileSync(conf, 'utf8');
      expect(text).toContain('token: $SNOTRA_NATS_TOKEN');
      expect(text).not.toContain(cluster.token());
      const argv = readFileSync(`/proc/${s.pid}/cmdline`, 'utf8');
      expect(argv).not.toContain(cluster.token());
    }
    const nc = await client(cluster.urls, cluster.token());
    const facts = await checkClusterServer(nc, 'test');
    expect(facts.cluster).toBe('snotra-test');
    expect(parseVersion(facts.version)).not.toBeNull();
    // A wrong token is refused.
    await expect(
      connect({ servers: [...cluster.urls], token: 'snotra_wrong', timeout: 3000, reconnect: false }),
    ).rejects.toThrow();
  });

  it('keeps a three-replica bucket writable with one server killed, and takes the server back', async () => {
    const nc = await client(cluster.urls, cluster.token());
    const kv = await new Kvm(nc).create('harness_probe', { replicas: 3, history: 1 });
    const r1 = await kv.put('k', 'one');
    expect((await kv.status()).replicas).toBe(3);
    const victim = cluster.servers.findIndex((s) => !nc.info?.server_name || s.name !== nc.info.server_name);
    await cluster.kill(victim);
    expect(cluster.servers[victim]?.running).toBe(false);
    await cluster.waitForMetaLeader();
    // Quorum (2 of 3): compare-and-swap still works.
    let r2 = 0;
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        r2 = await kv.update('k', 'two', r1);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(r2).toBeGreaterThan(r1);
    await expect(kv.update('k', 'stale', r1)).rejects.toThrow();
    await cluster.restart(victim);
    expect(cluster.servers[victim]?.running).toBe(true);
    const entry = await kv.get('k');
    expect(entry?.string()).toBe('two');
  });
});

describe('the connect-time feature check', () => {
  it('refuses a single JetStream server that is not clustered, naming what is missing', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-single-')));
    const nats = await startEmbeddedNats({ stateDir: dir });
    try {
      const t = nats.target();
      const nc = await client(t.url as string, (t.credentials as { token: string }).token);
      await expect(checkClusterServer(nc, 'bus.url')).rejects.toMatchObject({
        code: 'cluster_not_clustered',
        message: expect.stringContaining('not part of a cluster'),
      });
    } finally {
      await nats.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a server without JetStream', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-nojs-')));
    const token = generateNatsToken();
    writeServerConfig(
      dir,
      join(dir, 'c.conf'),
      'listen: 127.0.0.1:-1\nauthorization { token: $SNOTRA_NATS_TOKEN }\n',
    );
    const child = spawnWithLifeline(
      resolveNatsBinary(),
      ['-c', join(dir, 'c.conf'), '--ports_file_dir', dir],
      serverEnv(token),
      1000,
      dir,
    );
    child.wrapper.stderr?.resume();
    try {
      const pid = await child.serverPid;
      let ports = readClusterPorts(dir, pid);
      const deadline = Date.now() + 10_000;
      while (ports === null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        ports = readClusterPorts(dir, pid);
      }
      expect(ports).not.toBeNull();
      const nc = await client(ports?.clientUrl ?? '', token);
      await expect(checkClusterServer(nc, 'bus.url')).rejects.toMatchObject({ code: 'cluster_no_jetstream' });
    } finally {
      signalGroup(child.pgid, 'SIGKILL');
      child.wrapper.stdin?.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parses server versions and rejects what is not one', () => {
    expect(parseVersion('2.9.10')).toEqual([2, 9, 10]);
    expect(parseVersion('2.11.0-beta.1')).toEqual([2, 11, 0]);
    expect(parseVersion('2.9')).toBeNull();
    expect(parseVersion('x.y.z')).toBeNull();
  });
});

describe('starting the local cluster when a route port is taken', () => {
  it('begins again on other ports when another process binds a route port between its pick and the server’s bind', async () => {
    // A port held by this process stands for one another process took after the pick.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const held = (holder.address() as AddressInfo).port;
    const picks: number[][] = [];
    let first = true;
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-taken-route-')));
    let taken: NatsCluster | null = null;
    try {
      taken = await startLocalCluster({
        dir,
        clusterName: 'snotra-test',
        timeoutMs: 90_000,
        pickRoutePort: async (already) => {
          if (first) {
            first = false;
            picks.push([held]);
            return held;
          }
          const port = await new Promise<number>((resolve) => {
            const probe = createServer();
            probe.listen(0, '127.0.0.1', () => {
              const p = (probe.address() as AddressInfo).port;
              probe.close(() => resolve(p));
            });
          });
          picks.at(-1)?.push(port);
          if (picks.at(-1)?.length === 3) picks.push([]);
          return already.includes(port) ? port + 1 : port;
        },
      });
      // The first attempt's three picks (the held port first), then a second attempt's three.
      expect(picks[0]?.[0]).toBe(held);
      expect(picks.filter((p) => p.length === 3)).toHaveLength(2);
      const conf = readFileSync(join(dir, 'n1', 'nats-server.conf'), 'utf8');
      expect(conf).not.toContain(`127.0.0.1:${held}`);
      const nc = await client(taken.urls, taken.token());
      expect((await checkClusterServer(nc, 'test')).cluster).toBe('snotra-test');
    } finally {
      await taken?.stop();
      holder.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
