// A runtime node of a cluster in its own process, for SIGKILL tests:
//   node --import tsx test/cluster/node-child.ts <dir>
// Starts the runtime on <dir>/snotra.config.json (node.id, bus.url, bus.credentials from the env
// secret store) with a scripted model from <dir>/script.json and a counting `send_message` that
// appends `<idempotencyKey> <node> <channel>` to $SNOTRA_TEST_OUTBOX — and, while the file
// $SNOTRA_TEST_HANG exists, never returns after appending (a node killed mid-call).
// Reads JSON commands on stdin, writes JSON events on stdout.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { Runtime } from '../../runtime/runtime.ts';
import { EnvSecretStore } from '../../runtime/secrets/env.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const dir = process.argv[2] as string;
const outbox = process.env.SNOTRA_TEST_OUTBOX as string;
const hang = process.env.SNOTRA_TEST_HANG ?? '';
const steps = JSON.parse(readFileSync(join(dir, 'script.json'), 'utf8')) as ScriptedStep[];
const emit = (e: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(e)}\n`);
};
const loaded = loadConfig(join(dir, 'snotra.config.json'));
const nodeId = loaded.config.node?.id ?? 'none';

const runtime = await Runtime.start({
  loaded,
  model: new ScriptedModel({ worker: steps }),
  secretStore: new EnvSecretStore(),
  // The node's (redacted) log lines, kept beside its state for a failing test to show.
  logDestination: {
    write: (line: string) => {
      appendFileSync(join(dir, 'node.log'), line);
      return true;
    },
  } as unknown as NodeJS.WritableStream,
  syncIntervalMs: 100,
  logLevel: 'debug',
  executorOverrides: {
    send_message: {
      async execute(args, ctx) {
        appendFileSync(outbox, `${ctx.idempotencyKey} ${nodeId} ${String(args.channel)}\n`);
        emit({ event: 'called', key: ctx.idempotencyKey });
        if (hang !== '' && existsSync(hang)) await new Promise(() => {});
        return { delivered: true };
      },
    },
  },
});
runtime.onApproval((a) => emit({ event: 'approval', id: a.id, runId: a.runId }));
runtime.runs.onRunEvent((e) => {
  if (e.type === 'run.parked' || e.type === 'run.completed' || e.type === 'run.failed') {
    emit({ event: e.type, runId: e.runId });
  }
});
emit({ event: 'ready', node: nodeId });

const lines = createInterface({ input: process.stdin });
lines.once('close', () => {
  // Standard input closed (the test process is gone): stop instead of lingering as an orphan.
  void runtime.stop().finally(() => process.exit(0));
});
for await (const line of lines) {
  const cmd = JSON.parse(line) as { cmd: string; [k: string]: unknown };
  try {
    await handle(cmd);
  } catch (err) {
    emit({ event: 'error', cmd: cmd.cmd, message: (err as Error).message });
  }
}

async function handle(cmd: { cmd: string; [k: string]: unknown }): Promise<void> {
  if (cmd.cmd === 'task') {
    const runId = await runtime.runs.runTask('worker', String(cmd.task), 'go');
    emit({ event: 'task', runId });
  } else if (cmd.cmd === 'decide') {
    const result = await runtimeInternals(runtime).cluster?.decide(
      String(cmd.id),
      'approved',
      String(cmd.user),
    );
    // Killed right after the decision is in the shared Inbox and its resume item is queued:
    // no later step of this process runs.
    if (cmd.killAfter === true) process.kill(process.pid, 'SIGKILL');
    emit({ event: 'decided', ok: result?.ok ?? false, reason: result?.ok === false ? result.reason : null });
  } else if (cmd.cmd === 'status') {
    const runId = String(cmd.runId);
    emit({
      event: 'status',
      live: runtimeInternals(runtime).runs.liveRuns(),
      local: runtimeInternals(runtime).store.snapshots.get(runId)?.status ?? null,
      ledger: runtimeInternals(runtime).store.ledger.lookup(String(cmd.key))?.status ?? null,
    });
  } else if (cmd.cmd === 'stop') {
    await runtime.stop();
    emit({ event: 'stopped' });
    process.exit(0);
  }
}
