/**
 * An MCP call cut by a runtime crash (SIGKILL mid-call) has an unknown outcome: after the restart
 * it is reported to the model as `tool.interrupted` and never run again (the tool is not
 * idempotent), and no server process survived the crash.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { eventually, HOSTILE, hostileLog, hostileServer, mcpFixture, REPO } from './support.ts';
import { readFileSync, readdirSync } from 'node:fs';
import { childNodeArgs } from '../support/child-scripts.ts';

const SECRET = 'int-secret-Vb7-interrupted';
const CHILD = join(REPO, 'test/mcp/runtime-child.ts');

function markerPids(marker: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return (
          readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(marker) &&
          !/\) Z /.test(readFileSync(`/proc/${n}/stat`, 'utf8'))
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

function startChild(dir: string) {
  const child = spawn(process.execPath, [...childNodeArgs(CHILD), dir], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MCP_TEST_SECRET: SECRET },
  });
  const lines: string[] = [];
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { child, lines, exited, stderr: () => err };
}

describe('an MCP call interrupted by a runtime crash', () => {
  it('is reported after the restart and never run again', async () => {
    const marker = `marker-${randomUUID()}`;
    const fx = mcpFixture(
      (project) => ({
        agents: { worker: { mode: 'ask' } },
        mcp: { servers: { h: { ...hostileServer(project), args: [HOSTILE, marker] } } },
        // Vetted by the user as a read (the server says it destroys nothing): no human needed.
        tools: { 'mcp:h:slow': { risk: 'read' } },
      }),
      SECRET,
    );
    try {
      writeFileSync(
        join(fx.dir, 'script.json'),
        JSON.stringify([
          { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'mcp:h:slow', args: {} }] } },
          {
            expect: { kind: 'tool.interrupted', tool: 'mcp:h:slow' },
            respond: { kind: 'final', text: 'checked' },
          },
        ]),
      );
      const first = startChild(fx.dir);
      // The child's stderr is read when the wait fails, not when it starts (it is empty then).
      await eventually(
        () => hostileLog(fx.project).some((l) => l.startsWith('call slow')),
        60_000,
        'the call started',
      ).catch((err: Error) => {
        first.child.kill('SIGKILL');
        throw new Error(`${err.message}; first child stderr ${first.stderr()}`);
      });
      first.child.kill('SIGKILL');
      await first.exited;
      await eventually(() => markerPids(marker).length === 0, 20_000, 'no server process left');
      const second = startChild(fx.dir);
      let secondExit: string | null = null;
      second.child.once('exit', (code, signal) => (secondExit = `exit ${String(code ?? signal)}`));
      // What the restarted child printed, read when the wait fails (not when it starts).
      await eventually(() => second.lines.find((l) => l.startsWith('done')), 60_000, 'the run ended').catch(
        (err: Error) => {
          second.child.kill('SIGKILL'); // not left running after the test
          throw new Error(
            `${err.message}; restarted child ${secondExit ?? 'still running'}, stdout ${JSON.stringify(second.lines)}, stderr ${second.stderr()}`,
          );
        },
      );
      await second.exited;
      expect(second.lines.find((l) => l.startsWith('done'))).toMatch(/^done completed/);
      // Exactly one execution: the interrupted call was not re-run after the restart.
      expect(hostileLog(fx.project).filter((l) => l.startsWith('call slow'))).toHaveLength(1);
      expect(hostileLog(fx.project).filter((l) => l.startsWith('started'))).toHaveLength(2);
    } finally {
      fx.cleanup();
    }
  }, 180_000);
});
