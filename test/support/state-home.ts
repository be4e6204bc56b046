// No test writes into the real home: the default state dir ($XDG_STATE_HOME/snotra/...) of every
// config loaded in this worker, and of every child process it spawns, lies in a temporary folder.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const stateHome = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-state-home-')));
const previous = process.env.XDG_STATE_HOME;
process.env.XDG_STATE_HOME = stateHome;

afterAll(() => {
  if (process.env.XDG_STATE_HOME === stateHome) {
    if (previous === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = previous;
  }
  rmSync(stateHome, { recursive: true, force: true });
});
