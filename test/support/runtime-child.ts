// A runtime in a child process, for crash tests: node --import tsx test/support/runtime-child.ts <dir> <runs>
// Starts the runtime on <dir>/snotra.config.json with a scripted model, starts one task run the first
// time, prints `ready` and `done <status>` lines, and exits when every run has ended.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { Runtime } from '../../runtime/runtime.ts';
import { runIdFromFile } from './run-id-file.ts';

const dir = process.argv[2] as string;
const steps = JSON.parse(readFileSync(join(dir, 'script.json'), 'utf8')) as ScriptedStep[];
const outbox = join(dir, 'outbox.txt');
const runFile = join(dir, 'run-id.txt');

const runtime = await Runtime.start({
  loaded: loadConfig(join(dir, 'snotra.config.json')),
  model: new ScriptedModel({ worker: steps }),
  logDestination: { write: () => true } as unknown as NodeJS.WritableStream,
  executors: {
    send_message: {
      async execute(args, ctx) {
        // The side effect: one line per execution, tagged with the call's idempotency key.
        appendFileSync(outbox, `${ctx.idempotencyKey} ${String(args.channel)}\n`);
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 40));
        return { delivered: true };
      },
    },
  },
});
const runId = await runIdFromFile(runFile, () =>
  runtime.runs.runTask('worker', 'crash-task', 'send the messages', {
    // Its own message id: killed before the run id is written down, the relaunch sends the same
    // task again, which starts nothing (the run may already have started).
    messageId: 'crash-task-message',
  }),
);
process.stdout.write('ready\n');
const outcome = await runtime.waitForRun(runId);
process.stdout.write(`done ${outcome.status} ${outcome.reason}\n`);
await runtime.stop();
process.exit(0);
