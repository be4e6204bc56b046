import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultStateDir } from '../../runtime/config/state-dir.ts';
import { eventually } from '../support/runtime.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-statedir-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** An environment whose home and state home are temporary folders (never the real home). */
function envWith(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TZ: 'UTC', HOME: join(base, 'home') };
  delete env.XDG_STATE_HOME;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/** Starts `snotra start` in `cwd`, waits for the ready line, stops it with SIGTERM; returns both lines. */
async function startAndStop(cwd: string, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>[]> {
  const child = spawn(process.execPath, [BIN, 'start'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    await eventually(() => out.includes('"ready"'), 30_000, `the ready line (stderr: ${err})`);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the default state dir lives outside the workspace', () => {
  it('snotra start without a config keeps its state under $XDG_STATE_HOME/snotra and writes nothing into the folder', async () => {
    const ws = join(base, 'my-workspace');
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, 'README.md'), 'hello\n');
    const xdg = join(base, 'xdg');
    const expected = defaultStateDir(ws, { XDG_STATE_HOME: xdg });
    expect(expected.startsWith(join(xdg, 'snotra', 'my-workspace-'))).toBe(true);
    const [ready, stopped] = await startAndStop(ws, envWith({ XDG_STATE_HOME: xdg }));
    expect(ready).toMatchObject({ event: 'ready', config: null, stateDir: expected });
    expect(stopped).toMatchObject({ event: 'stopped' });
    expect(readdirSync(ws)).toEqual(['README.md']);
    expect(existsSync(join(expected, 'snotra.db'))).toBe(true);
    // Read-only commands run in the same folder find the same state.
    const runs = spawnSync(process.execPath, [BIN, 'runs', 'list', '--json'], {
      cwd: ws,
      env: envWith({ XDG_STATE_HOME: xdg }),
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    });
    expect(runs.stderr).toBe('');
    expect(runs.status).toBe(0);
    const audit = spawnSync(process.execPath, [BIN, 'audit', '--verify'], {
      cwd: ws,
      env: envWith({ XDG_STATE_HOME: xdg }),
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    });
    expect(audit.stderr).toBe('');
    expect(audit.stdout).toMatch(/^audit chain ok/);
  });

  it('falls back to ~/.local/state/snotra when XDG_STATE_HOME is unset', async () => {
    const ws = join(base, 'other');
    mkdirSync(ws, { recursive: true });
    const [ready] = await startAndStop(ws, envWith({}));
    expect(String(ready?.stateDir)).toMatch(
      new RegExp(`^${join(base, 'home', '.local', 'state', 'snotra', 'other-')}[0-9a-f]{12}$`),
    );
    expect(readdirSync(ws)).toEqual([]);
  });

  it('a refused config leaves nothing behind: exit 1, the file and JSON path named, no state dir', () => {
    const ws = join(base, 'bad');
    mkdirSync(ws, { recursive: true });
    const file = join(ws, 'snotra.config.json');
    writeFileSync(
      file,
      JSON.stringify({ agents: { a: { rules: [{ id: 'x', tool: 'shel', effect: 'deny' }] } } }),
    );
    const xdg = join(base, 'xdg-bad');
    const r = spawnSync(process.execPath, [BIN, 'start'], {
      cwd: ws,
      env: envWith({ XDG_STATE_HOME: xdg }),
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    });
    // Not cut by the 30 s SIGKILL above (that would be status null): it refused and exited on its own.
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `${file}: invalid config\n  agents.a.rules[0].tool: unknown tool "shel"; did you mean "shell"?\n`,
    );
    expect(existsSync(xdg)).toBe(false);
    expect(readdirSync(ws)).toEqual(['snotra.config.json']);
  });
});
