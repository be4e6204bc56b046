import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSnotra, type StartedProcess } from '../support/snotra-process.ts';

const procs: StartedProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of procs.splice(0).reverse()) {
    p.child.kill('SIGTERM');
    await p.exited;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('snotra dev-cluster', () => {
  it('starts three servers, prints what each node needs without the token, and a node boots in cluster mode from it', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-devc-')));
    dirs.push(dir);
    const cluster = startSnotra(['dev-cluster', '--dir', join(dir, 'c'), '--nodes', '2']);
    procs.push(cluster);
    const ready = (await cluster.ready(60_000)) as {
      servers: string[];
      tokenFile: string;
      nodes: { id: string; config: string; start: string }[];
    };
    expect(ready.servers).toHaveLength(3);
    expect(ready.nodes.map((n) => n.id)).toEqual(['node-a', 'node-b']);
    expect(statSync(ready.tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(ready.tokenFile, 'utf8');
    expect(token).toMatch(/^snotra_[0-9a-f]{64}$/);
    expect(cluster.stdout()).not.toContain(token);
    expect(ready.nodes[0]?.start).toContain('SNOTRA_SECRET_NATS="$(cat ');
    const nodeConfig = JSON.parse(readFileSync(ready.nodes[0]?.config as string, 'utf8')) as Record<
      string,
      unknown
    >;
    expect(nodeConfig).toMatchObject({ node: { id: 'node-a' }, bus: { credentials: { secret: 'nats' } } });
    // Every server of the cluster, as a list (a node starts while one of them is down).
    expect((nodeConfig.bus as { url: unknown }).url).toEqual(ready.servers);
    expect(JSON.stringify(nodeConfig)).not.toContain(token);

    // What the ready line says is enough: the node starts in cluster mode on it.
    const node = startSnotra(['start', '--config', ready.nodes[0]?.config as string], {
      SNOTRA_SECRET_NATS: token,
      XDG_STATE_HOME: join(dir, 'xdg'),
    });
    procs.push(node);
    await node.ready(60_000);
    expect(node.stdout()).not.toContain(token);
    expect(node.stderr()).not.toContain(token);
    // It holds its lease in the shared bucket: it really is a cluster node.
    const nc = await connect({ servers: ready.servers, token });
    try {
      const leases = await new Kvm(nc).open('snotra_nodes');
      const entry = await leases.get(`k${Buffer.from('node-a').toString('base64url')}`);
      expect(JSON.parse(entry?.string() ?? '{}')).toMatchObject({ node: 'node-a' });
    } finally {
      await nc.close();
    }
  }, 120_000);

  it('refuses a bad --nodes with a usage error', async () => {
    const p = startSnotra(['dev-cluster', '--nodes', 'ten']);
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toContain('--nodes must be an integer from 1 to 9');
  });
});
