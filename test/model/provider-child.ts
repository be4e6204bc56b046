// A runtime with a real network model provider in a child process, for restart tests:
//   node --import tsx test/model/provider-child.ts <dir>
// Loads <dir>/snotra.config.json (the key comes from SNOTRA_SECRET_* through `secrets.backend: "env"`),
// starts one task run the first time, and prints `done <status> <reason>` when the run ends. Its
// `read_file` is the real executor behind a trap: the first life SIGKILLs itself the moment the
// call is about to run (after the model proposed it, before it ran); later lives log each
// execution to <dir>/executions.txt and run it.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../runtime/config/load.ts';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import { Runtime } from '../../runtime/runtime.ts';
import { secretStoreFromConfig } from '../../runtime/config/adapters/secrets.ts';
import { createDefaultTools } from '../../runtime/tools.ts';
import { runIdFromFile } from '../support/run-id-file.ts';

const dir = process.argv[2] as string;
const runFile = join(dir, 'run-id.txt');
const killed = join(dir, 'killed.txt');
const loaded = loadConfig(join(dir, 'snotra.config.json'));
const real = createDefaultTools();
const readFile = real.executors.read_file;
if (readFile === undefined) throw new Error('no read_file executor');

const runtime = await Runtime.start({
  loaded,
  model: modelFromConfig(loaded, { retryBaseMs: 20 }),
  secretStore: secretStoreFromConfig(loaded),
  executorOverrides: {
    read_file: {
      async execute(args, ctx) {
        if (!existsSync(killed)) {
          writeFileSync(killed, `${ctx.idempotencyKey}\n`);
          process.kill(process.pid, 'SIGKILL');
          await new Promise(() => {});
        }
        appendFileSync(join(dir, 'executions.txt'), `${ctx.idempotencyKey}\n`);
        return readFile.execute(args, ctx);
      },
    },
  },
});
const runId = await runIdFromFile(runFile, () =>
  runtime.runs.runTask('assistant', 'restart-task', 'what does notes.txt say?', {
    // Its own message id: killed before the run id is written down, the relaunch sends the same
    // task again, which starts nothing (the run may already have started).
    messageId: 'restart-task-message',
  }),
);
process.stdout.write('ready\n');
const outcome = await runtime.waitForRun(runId);
process.stdout.write(
  `done ${outcome.status} ${outcome.reason} ${JSON.stringify(outcome.text ?? outcome.message ?? '')}\n`,
);
await runtime.stop();
await real.close();
process.exit(0);
