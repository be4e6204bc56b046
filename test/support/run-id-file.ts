// The run id a crash-test child keeps in its directory across kills. Written whole or not at all
// (a SIGKILL inside a plain write once left an empty file, and the relaunch waited on run "" for
// ever); an absent or empty file means the id is not known, and the task is sent again with its
// own message id, which starts nothing when the run already exists and gives back its id.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

export async function runIdFromFile(file: string, start: () => Promise<string>): Promise<string> {
  const known = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (known !== '') return known;
  const runId = await start();
  writeFileSync(`${file}.tmp`, runId);
  renameSync(`${file}.tmp`, file);
  return runId;
}
