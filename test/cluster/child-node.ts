import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedStep } from '../../actors/model/scripted.ts';
import type { NatsCluster } from '../support/nats-cluster.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

/** A runtime node in a child process (see node-child.ts). */
export interface ChildNode {
  readonly id: string;
  readonly proc: ChildProcess;
  readonly events: Record<string, unknown>[];
  send(cmd: Record<string, unknown>): void;
  waitFor(
    pred: (e: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a node child with its own state dir under `root`; resolves once it printed `ready`. */
export async function startChildNode(options: {
  cluster: NatsCluster;
  root: string;
  id: string;
  script: ScriptedStep[];
  mode: 'allow' | 'ask';
  outbox: string;
  hangFile?: string;
  /** The server of the cluster this node names in bus.url (it learns the others from it). */
  server?: number;
}): Promise<ChildNode> {
  const dir = join(options.root, options.id);
  mkdirSync(join(dir, 'project'), { recursive: true });
  writeFileSync(join(dir, 'script.json'), JSON.stringify(options.script));
  writeFileSync(
    join(dir, 'snotra.config.json'),
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: {
        worker: { mode: options.mode, budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 120_000 } },
      },
      secrets: { backend: 'env' },
      bus: { url: options.cluster.urls[options.server ?? 0], credentials: { secret: 'nats' } },
      node: { id: options.id, leaseTtlMs: 1500, resumeAckWaitMs: 2000 },
    }),
  );
  const proc = spawn(process.execPath, [...childNodeArgs(join(import.meta.dirname, 'node-child.ts')), dir], {
    cwd: join(import.meta.dirname, '..', '..'),
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? dir,
      XDG_STATE_HOME: join(dir, 'xdg'),
      // The bus token reaches the node as a secret in its environment, never in argv or a file.
      SNOTRA_SECRET_NATS: options.cluster.token(),
      SNOTRA_TEST_OUTBOX: options.outbox,
      ...(options.hangFile === undefined ? {} : { SNOTRA_TEST_HANG: options.hangFile }),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const logTail = (): string => {
    const f = join(dir, 'node.log');
    return existsSync(f) ? readFileSync(f, 'utf8').split('\n').slice(-40).join('\n') : '(no log)';
  };
  const events: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let buf = '';
  let exited = false;
  const exit = new Promise<void>((r) =>
    proc.once('exit', () => {
      exited = true;
      for (const w of waiters) w();
      r();
    }),
  );
  proc.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  proc.stdout?.on('data', (c: Buffer) => {
    buf += c.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not an event line
      }
      for (const w of waiters) w();
    }
  });
  const waitFor = (pred: (e: Record<string, unknown>) => boolean, what: string, timeoutMs = 30_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = (): void => {
        const hit = events.find(pred);
        if (hit !== undefined) {
          cleanup();
          resolve(hit);
        } else if (exited) {
          cleanup();
          reject(
            new Error(
              `node ${options.id} exited before ${what}; stderr: ${stderr.replaceAll(options.cluster.token(), '***')}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `node ${options.id}: timed out waiting for ${what}; events: ${JSON.stringify(events)}; last log lines:\n${logTail()}`,
          ),
        );
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  const node: ChildNode = {
    id: options.id,
    proc,
    events,
    send: (cmd) => proc.stdin?.write(`${JSON.stringify(cmd)}\n`),
    waitFor,
    kill: async () => {
      if (!exited) proc.kill('SIGKILL');
      await exit;
    },
    stop: async () => {
      if (exited) return;
      node.send({ cmd: 'stop' });
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exit;
      clearTimeout(t);
    },
  };
  await waitFor((e) => e.event === 'ready', 'ready', 60_000);
  return node;
}
