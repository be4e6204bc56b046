import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../runtime/bus/processes.ts';
import { eventually, livePidsInGroup, tempStateDir } from './helpers.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const fixture = fileURLToPath(new URL('./fixtures/embedded-child.ts', import.meta.url));

describe('lifeline', () => {
  it('kills the nats-server when the runtime process is SIGKILLed (its lifeline, not a timer)', async () => {
    const stateDir = tempStateDir();
    const child = spawn(process.execPath, [...childNodeArgs(fixture), stateDir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`fixture exited early with ${code}`)));
    });
    const { pid, pgid } = JSON.parse(line) as { pid: number; pgid: number };
    expect(isProcessAlive(pid)).toBe(true);
    expect(pgid).not.toBe(child.pid);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // A generous deadline on a condition (a loaded machine), not a timing claim.
    expect(await eventually(() => !isProcessAlive(pid), 30_000)).toBe(true);
    expect(await eventually(() => livePidsInGroup(pgid).length === 0, 30_000)).toBe(true);
    rmSync(stateDir, { recursive: true, force: true });
  });
});
