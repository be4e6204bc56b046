import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, Redactor } from '../../store/index.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-epipe-')));
const stateDir = join(dir, 'state');
const ROWS = 3000;

beforeAll(() => {
  // Far more output than a pipe buffer holds, so the writer meets a closed pipe.
  const store = openStore({ path: join(stateDir, 'snotra.db'), redactor: new Redactor() });
  try {
    for (let i = 0; i < ROWS; i++) {
      const runId = `assistant:run-${String(i).padStart(5, '0')}-${'x'.repeat(40)}`;
      store.snapshots.put({
        runId,
        agentId: 'assistant',
        surface: 'chat',
        status: 'completed',
        snapshot: { status: 'done', context: { runId } },
      });
      store.audit.append({
        kind: 'proposed',
        runId,
        callId: 'c1',
        tool: 'read_file',
        detail: { args: { path: 'a.txt' } },
      });
    }
  } finally {
    store.close();
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `snotra ARGS | head -1` under bash and returns head's output, snotra's stderr and exit status. */
function piped(args: string[]) {
  const r = spawnSync(
    'bash',
    [
      '-c',
      `"${process.execPath}" "${BIN}" "$@" 2>"${dir}/err" | head -1; echo "\${PIPESTATUS[0]}" >"${dir}/status"; cat "${dir}/err" >&2; cat "${dir}/status" >&2`,
      'snotra',
      ...args,
    ],
    { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' },
  );
  const lines = r.stderr.trimEnd().split('\n');
  const status = lines.pop();
  return { stdout: r.stdout, stderr: lines.join('\n'), status: Number(status) };
}

describe('the CLI exits quietly when its reader goes away (EPIPE)', () => {
  it('snotra runs list --json | head -1', () => {
    const r = piped(['runs', 'list', '--json', '--state-dir', stateDir]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ agentId: 'assistant', status: 'completed' });
  });

  it('snotra audit | head -1', () => {
    const r = piped(['audit', '--state-dir', stateDir]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\S+ #1 proposed run=assistant:run-00000-x+ call=c1 .*\n$/);
  });

  it('without a closed pipe the whole output arrives (the guard stops nothing else)', () => {
    const r = spawnSync(process.execPath, [BIN, 'audit', '--json', '--state-dir', stateDir], {
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(ROWS);
  });
});
