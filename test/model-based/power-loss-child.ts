// One process of a power-loss case (test/model-based/power-loss.test.ts):
//   node --import tsx test/model-based/power-loss-child.ts <dir> kill <scenario> <k> <before|after>
//     runs the scenario, deciding through the ApprovalService; the k-th flush of the store
//     (group commit `sync` or `syncNow`) is SIGKILLed just before its fdatasync or just after it
//     returned. After every completed flush the WAL size it covered is written to `durable-wal`,
//     so the test can drop what an OS crash would have lost (the WAL past that size);
//   node --import tsx test/model-based/power-loss-child.ts <dir> resume <scenario> <k> <when>
//     a fresh process: restores the run from the store, finishes it, prints `done <status>`.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fdatasyncFile, fdatasyncFileNow } from '../../store/group-sync.ts';
import { RestartHarness } from './harness.ts';
import { scenarios } from './run-scenarios.ts';

const [dir, mode, name, kArg, when] = process.argv.slice(2) as [
  string,
  'kill' | 'resume',
  string,
  string,
  string,
];
const scenario = scenarios().find((s) => s.name === name);
if (scenario === undefined) throw new Error(`no scenario ${JSON.stringify(name)}`);
const k = Number(kArg);
let flushes = 0;
const marker = join(dir, 'durable-wal');
/** Wraps one flush: kill before/after the k-th; record what a completed one made durable. */
const around = (path: string, flush: () => void | Promise<void>): void | Promise<void> => {
  flushes++;
  const n = flushes;
  const size = statSync(path).size; // no commit runs during a flush: this is a commit boundary
  if (mode === 'kill' && n === k && when === 'before') process.kill(process.pid, 'SIGKILL');
  const done = (): void => {
    if (path.endsWith('-wal')) writeFileSync(marker, String(size));
    if (mode === 'kill' && n === k && when === 'after') process.kill(process.pid, 'SIGKILL');
  };
  const r = flush();
  if (r instanceof Promise) return r.then(done);
  done();
};
const h = await RestartHarness.create(undefined, dir, {
  syncFile: (path) => around(path, () => fdatasyncFile(path)) as Promise<void>,
  syncFileNow: (path) => void around(path, () => fdatasyncFileNow(path)),
  decideThroughService: true,
});
const r = await h.run(scenario, `${name}:kill${kArg}${when}`, null, {
  kill: mode === 'kill',
  resume: mode === 'resume',
});
process.stdout.write(`done ${r.outcome.status} flushes ${flushes}\n`);
h.close();
process.exit(0);
