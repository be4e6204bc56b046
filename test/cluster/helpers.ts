import { appendFileSync, existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelProvider } from '../../actors/model/provider.ts';
import type { ScriptedStep } from '../../actors/model/scripted.ts';
import type { ToolExecutor } from '../../actors/tools/types.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import type { RuntimeOptions } from '../../runtime/boot/options.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import type { NatsCluster } from '../support/nats-cluster.ts';

/** A file every node's `send_message` appends to: the side-effect counter shared by the nodes. */
export function sharedOutbox(): { file: string; lines(): string[] } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-outbox-')));
  const file = join(dir, 'outbox.txt');
  return {
    file,
    lines: () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []),
  };
}

/** `send_message` appending `<idempotencyKey> <node> <channel>` to the shared outbox. */
export function countingSend(outbox: string, node: string): ToolExecutor {
  return {
    async execute(args, ctx) {
      appendFileSync(outbox, `${ctx.idempotencyKey} ${node} ${String(args.channel)}\n`);
      return { delivered: true };
    },
  };
}

/** One send to #ops, then a final answer that expects its result. */
export const NOTIFY: ScriptedStep[] = [
  {
    respond: {
      kind: 'calls',
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'nightly done' } }],
    },
  },
  { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'notified' } },
];

export const ASK_CONFIG = {
  agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 120_000 } } },
};

/** A runtime node in this process on the test cluster. */
export interface TestNode {
  readonly id: string;
  readonly fx: RuntimeFixture;
  rt: Runtime;
}

export async function startNode(
  cluster: NatsCluster,
  id: string,
  model: ModelProvider,
  outbox: string,
  config: Record<string, unknown> = ASK_CONFIG,
  node: Record<string, unknown> = {},
  extra: Partial<RuntimeOptions> = {},
): Promise<TestNode> {
  const fx = runtimeFixture({
    ...config,
    bus: { url: cluster.urls[0] },
    node: { id, leaseTtlMs: 1500, resumeAckWaitMs: 2000, ...node },
  });
  const rt = await fx.start(model, {
    busTarget: cluster.target(),
    executorOverrides: { send_message: countingSend(outbox, id) },
    ...extra,
  });
  return { id, fx, rt };
}
