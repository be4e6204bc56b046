import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { logOutput } from '../../surfaces/cli/log-output.ts';
import { startSnotra, stopProcess } from '../support/snotra-process.ts';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/runtime.ts';
import { BIN, ptyScriptArgs } from './run-helpers.ts';

/**
 * `snotra start` on a pseudo-terminal (util-linux `script`: stdout and stderr are the terminal),
 * stopped with SIGTERM at its ready line; returns everything the terminal showed.
 */
async function startOnTerminal(config: string, env: NodeJS.ProcessEnv): Promise<string> {
  const args = ptyScriptArgs([process.execPath, BIN, 'start', '--config', config]);
  const child = spawn('script', args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...env, SHELL: '/bin/sh' } });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const ready = await eventually(
      () => /\{"event":"ready"[^\r\n]*\}/.exec(out)?.[0],
      60_000,
      `the ready line on the terminal; so far:\n${out}`,
    );
    process.kill((JSON.parse(ready) as { pid: number }).pid, 'SIGTERM');
    expect(await exited).toBe(0);
    return out;
  } finally {
    child.kill('SIGKILL');
  }
}

describe('log output of the CLI', () => {
  it('JSON lines unless stderr is a terminal; SNOTRA_LOG_FORMAT forces a form', () => {
    expect(logOutput({ isTTY: false }, {})).toBeUndefined();
    expect(logOutput({ isTTY: true }, { SNOTRA_LOG_FORMAT: 'json' })).toBeUndefined();
    expect(logOutput({ isTTY: true }, {})).toBeDefined();
    expect(logOutput({ isTTY: false }, { SNOTRA_LOG_FORMAT: 'pretty' })).toBeDefined();
  });

  it('on a terminal: readable, colored lines; with NO_COLOR the same lines without color', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-logtty-')));
    try {
      mkdirSync(join(dir, 'project'));
      const config = join(dir, 'snotra.config.json');
      writeFileSync(
        config,
        JSON.stringify({
          stateDir: 'state',
          workspace: { roots: [{ id: 'p', path: 'project', access: 'read-write' }] },
        }),
      );
      const env: NodeJS.ProcessEnv = { ...process.env, TZ: 'UTC' };
      delete env.NO_COLOR;
      delete env.SNOTRA_LOG_FORMAT;
      delete env.FORCE_COLOR;
      const colored = await startOnTerminal(config, env);
      expect(colored).not.toContain('{"level"');
      // pino-pretty's level label in color, then the message.
      const esc = '\u001b';
      expect(colored).toMatch(
        new RegExp(`${esc}\\[\\d+mINFO${esc}\\[\\d+m.*bus: embedded nats-server started`),
      );
      const plain = await startOnTerminal(config, { ...env, NO_COLOR: '1' });
      expect(plain).toMatch(/INFO \(snotra\/\d+\): bus: embedded nats-server started/);
      expect(plain).not.toContain('{"level"');
      expect(plain).not.toContain('\u001b[');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('SNOTRA_LOG_FORMAT=pretty: readable lines on stderr, the ready line on stdout stays JSON', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-logfmt-')));
    try {
      mkdirSync(join(dir, 'project'));
      writeFileSync(
        join(dir, 'snotra.config.json'),
        JSON.stringify({
          stateDir: 'state',
          workspace: { roots: [{ id: 'p', path: 'project', access: 'read-write' }] },
        }),
      );
      const p = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
        SNOTRA_LOG_FORMAT: 'pretty',
        NO_COLOR: '1',
      });
      const ready = await p.ready();
      expect(ready.event).toBe('ready');
      expect(await stopProcess(p)).toBe(0);
      expect(p.stderr()).toMatch(/INFO \(snotra\/\d+\): bus: embedded nats-server started/);
      expect(p.stderr()).not.toContain('{"level"');
      const sidecar = /INFO \(snotra\/\d+\): sidecar listening\n\s+url: "(http:\/\/127\.0\.0\.1:\d+)"/.exec(
        p.stderr(),
      );
      expect(sidecar?.[1]).toBe(ready.sidecar);
      expect(p.stderr()).toMatch(/(INFO|WARN) \(snotra\/\d+\): sandbox: (bubblewrap|none)/);
      // No color codes with NO_COLOR (and none when stderr is not a terminal anyway).
      expect(p.stderr()).not.toContain('\u001b[');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
