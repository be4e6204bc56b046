// A runtime in a child process that SIGKILLs itself once at a chosen point of a call's lifecycle:
//   node --import tsx test/support/lifecycle-child.ts <dir> <point> <approved|denied>
// Points: before-approval, parked, after-approve, mid-call, after-complete, none. A marker file
// makes each kill happen once, so the next launch runs through. Prints `done <status> <reason>`.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { ModelProvider } from '../../actors/model/provider.ts';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { Runtime } from '../../runtime/runtime.ts';
import { runIdFromFile } from './run-id-file.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const [dir, point, decision] = process.argv.slice(2) as [string, string, 'approved' | 'denied'];
const marker = join(dir, `killed-${point}`);
const armed = point !== 'none' && !existsSync(marker);
function die(at: string): void {
  if (!armed || at !== point) return;
  writeFileSync(marker, '');
  process.kill(process.pid, 'SIGKILL');
}

const inner = new ScriptedModel({
  worker: [
    {
      respond: {
        kind: 'calls',
        calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'pay' } }],
      },
    },
    { respond: { kind: 'final', text: 'finished' } },
  ],
});
const model: ModelProvider = {
  async step(req) {
    if (req.step === 0) die('before-approval');
    return inner.step(req);
  },
};
const runtime = await Runtime.start({
  loaded: loadConfig(join(dir, 'snotra.config.json')),
  model,
  logDestination: new Writable({ write: (_c, _e, cb) => cb() }),
  executorOverrides: {
    send_message: {
      async execute() {
        appendFileSync(join(dir, 'counter.txt'), 'x\n');
        die('mid-call');
        return { sent: true };
      },
    },
  },
});
const runFile = join(dir, 'run-id.txt');
// Its own message id, as a caller that retries must: a kill before the run id is written down
// (the run may already be taking its first step) sends the same task again, which starts nothing.
const runId = await runIdFromFile(runFile, () =>
  runtime.runs.runTask('worker', 'lifecycle', 'pay once', { messageId: 'lifecycle-task' }),
);
const ended = runtime.waitForRun(runId);
let finished = false;
void ended.then(() => (finished = true));
while (!finished) {
  const pending = runtimeInternals(runtime).store.approvals.listPending({ taskId: 'lifecycle' })[0];
  if (pending !== undefined && !runtimeInternals(runtime).runs.isLive(runId)) {
    die('parked');
    if (point === 'after-approve' && armed) {
      // Decided in the store (as the CLI does from outside), then killed before the runtime resumes.
      runtimeInternals(runtime).store.approvals.decide(pending.id, decision, 'tester');
      die('after-approve');
    }
    runtime.decide(pending.id, decision, 'tester');
  }
  await new Promise((r) => setTimeout(r, 10));
}
const outcome = await ended;
die('after-complete');
process.stdout.write(`done ${outcome.status} ${outcome.reason}\n`);
await runtime.stop();
process.exit(0);
