import { chmodSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalCluster } from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';

const USAGE = 'usage: snotra dev-cluster [--dir D] [--nodes N]';

/**
 * The config a runtime node of the dev cluster needs (written next to the servers' folders):
 * every server of the cluster in `bus.url`, the node's own first (it starts while one is down).
 */
function nodeConfig(id: string, urls: readonly string[]): Record<string, unknown> {
  return {
    stateDir: `state-${id}`,
    secrets: { backend: 'env' },
    bus: { url: urls, credentials: { secret: 'nats' } },
    node: { id },
  };
}

/**
 * `snotra dev-cluster`: a local three-server JetStream cluster for trying cluster mode, until
 * SIGINT/SIGTERM. Writes under `--dir` (default `./.snotra-dev-cluster`): the servers' 0600
 * configs and data, the per-launch token in a 0600 file `token` (never printed, never in argv),
 * and one config per runtime node (`node-<x>.json`). Prints one JSON line
 * `{"event":"ready","servers":[…],"tokenFile":…,"nodes":[{"id","config","start"}]}`: what each node
 * needs (its config file, and the token given as the `nats` secret in its environment).
 */
export async function devClusterCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { dir: { type: 'string' }, nodes: { type: 'string' } },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const count = values.nodes === undefined ? 2 : Number(values.nodes);
  if (!Number.isInteger(count) || count < 1 || count > 9) {
    throw new UsageError(
      `--nodes must be an integer from 1 to 9, got ${JSON.stringify(values.nodes)}\n${USAGE}`,
    );
  }
  const dir = resolve(cwd, values.dir ?? '.snotra-dev-cluster');
  let signalled: () => void = () => {};
  const stopSignal = new Promise<void>((r) => {
    signalled = r;
  });
  process.on('SIGINT', signalled);
  process.on('SIGTERM', signalled);
  try {
    const cluster = await startLocalCluster({ dir, clusterName: 'snotra-dev' });
    try {
      const tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, cluster.token(), { mode: 0o600 });
      chmodSync(tokenFile, 0o600);
      const nodes = Array.from({ length: count }, (_, i) => {
        const id = `node-${String.fromCharCode(97 + i)}`;
        const config = join(dir, `${id}.json`);
        writeFileSync(
          config,
          `${JSON.stringify(nodeConfig(id, [...cluster.urls.slice(i % 3), ...cluster.urls.slice(0, i % 3)]), null, 2)}\n`,
        );
        return {
          id,
          config,
          start: `SNOTRA_SECRET_NATS="$(cat ${tokenFile})" snotra start --config ${config}`,
        };
      });
      io.stdout(
        `${JSON.stringify({
          event: 'ready',
          cluster: 'snotra-dev',
          servers: cluster.urls,
          tokenFile,
          nodes,
        })}\n`,
      );
      await stopSignal;
    } finally {
      await cluster.stop();
    }
    io.stdout(`${JSON.stringify({ event: 'stopped' })}\n`);
    return ExitCode.ok;
  } finally {
    process.off('SIGINT', signalled);
    process.off('SIGTERM', signalled);
  }
}
