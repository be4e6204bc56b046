// A runtime with MCP servers in a child process, for crash tests:
// node --import tsx test/mcp/runtime-child.ts <dir>
// Starts the runtime on <dir>/snotra.config.json (secret "hostile-token" from MCP_TEST_SECRET),
// starts one task run of agent "worker" the first time, prints `ready` and `done <status>`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { Runtime } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/memory.ts';
import { runIdFromFile } from '../support/run-id-file.ts';

const dir = process.argv[2] as string;
const steps = JSON.parse(readFileSync(join(dir, 'script.json'), 'utf8')) as ScriptedStep[];
const runFile = join(dir, 'run-id.txt');
const secret = process.env.MCP_TEST_SECRET ?? '';
delete process.env.MCP_TEST_SECRET;

const runtime = await Runtime.start({
  loaded: loadConfig(join(dir, 'snotra.config.json')),
  model: new ScriptedModel({ worker: steps }),
  secretStore: new MemorySecretStore({ 'hostile-token': secret }),
  logDestination: { write: () => true } as unknown as NodeJS.WritableStream,
});
const runId = await runIdFromFile(runFile, () =>
  runtime.runs.runTask('worker', 'crash-task', 'call the slow tool', {
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
