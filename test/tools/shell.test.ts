import { mkdirSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toObservation } from '../../actors/tools/observation.ts';
import { createShellExecutor, type ShellOptions } from '../../actors/tools/shell.ts';
import { ToolError } from '../../actors/tools/types.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createBubblewrapSandbox, hostRulesOf } from '../../runtime/sandbox/index.ts';
import { createPathGuard } from '../../policy/paths/index.ts';
import { createSecretResolver, MemorySecretStore } from '../../runtime/secrets/index.ts';
import { Redactor } from '../../store/redaction/redactor.ts';
import { createTestWorkspace, type TestWorkspace } from './support.ts';

const PLANTED = {
  NODE_OPTIONS: '--max-old-space-size=4096',
  NODE_PATH: '/tmp/evil-modules',
  X_TOKEN: 'planted-token-value',
  Y_KEY: 'planted-key-value',
  Z_SECRET: 'planted-secret-value',
  SNOTRA_UNRELATED_PARENT_VAR: 'unrelated',
};

let ws: TestWorkspace;
let supervisor: ProcessSupervisor;
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  for (const [name, value] of Object.entries(PLANTED)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  // Shell commands the policy allowed on its own run only in the OS sandbox.
  const guard = createPathGuard({ stateDir: '/nonexistent/state', configFile: '/nonexistent/config.json' });
  const sandbox = createBubblewrapSandbox({ bwrap: '/usr/bin/bwrap', rules: hostRulesOf(guard) });
  supervisor = new ProcessSupervisor({ killGraceMs: 500, sandbox });
});
afterAll(async () => {
  await supervisor.shutdown();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});
beforeEach(() => {
  ws = createTestWorkspace();
});
afterEach(() => ws.cleanup());

function shell(options: Partial<ShellOptions> = {}) {
  return createShellExecutor({ runner: supervisor, timeoutMs: 10_000, ...options });
}

async function run(
  command: string,
  options: Partial<ShellOptions> = {},
  extra: { cwd?: string; signal?: AbortSignal } = {},
) {
  const args: Record<string, unknown> = { command };
  if (extra.cwd !== undefined) args.cwd = extra.cwd;
  const ctx = ws.context(
    ws.decide('shell', args),
    extra.signal === undefined ? {} : { signal: extra.signal },
  );
  return shell(options).execute(args, ctx) as Promise<{ stdout: string; stderr: string; truncated: boolean }>;
}

/** Live (non-zombie) processes whose command line contains `marker`. */
/**
 * This process's own sleep durations: a pid-derived fraction makes each run's markers its own, so
 * a second run of this file on the same machine (two fresh clones tested at once) is never
 * counted as this one's leftovers.
 */
const tag = String(process.pid).padStart(7, '0');
const sleepOf = (whole: number) => `${whole}.${tag}`;

async function liveWithMarker(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0').join(' ');
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmdline.includes(marker) && state !== 'Z') found.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

describe('shell', () => {
  it('gives the child only the allowlisted environment: none of the planted parent variables', async () => {
    const { stdout } = await run('env');
    const names = stdout
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.slice(0, l.indexOf('=')));
    for (const planted of Object.keys(PLANTED)) expect(names).not.toContain(planted);
    for (const value of Object.values(PLANTED)) expect(stdout).not.toContain(value);
    expect(names).toContain('PATH');
    expect(
      names.every((n) =>
        /^(PATH|HOME|LANG|LANGUAGE|TERM|TMPDIR|USER|LOGNAME|SHELL|TZ|LC_\w+|PWD|SHLVL|_|OLDPWD)$/.test(n),
      ),
    ).toBe(true);
  });

  it('adds configured variables; credential-like names only from a secret, never NODE_OPTIONS', async () => {
    const redactor = new Redactor();
    const secrets = createSecretResolver(new MemorySecretStore({ api: 'resolved-api-token-123' }), redactor);
    const args = { command: 'echo "$GREETING/$API_TOKEN"' };
    const ctx = ws.context(ws.decide('shell', args), { secrets });
    const ok = (await shell({ env: { GREETING: 'hi', API_TOKEN: { secret: 'api' } } }).execute(
      args,
      ctx,
    )) as {
      stdout: string;
    };
    expect(ok.stdout).toBe('hi/resolved-api-token-123\n');
    await expect(shell({ env: { API_TOKEN: 'literal' } }).execute(args, ctx)).rejects.toMatchObject({
      code: 'env_variable_refused',
    });
    await expect(
      shell({ env: { NODE_OPTIONS: { secret: 'api' } } }).execute(args, ctx),
    ).rejects.toMatchObject({
      code: 'env_variable_refused',
    });
  });

  it('runs in the decided cwd, or the primary root', async () => {
    mkdirSync(join(ws.root, 'sub'));
    expect((await run('pwd', {}, { cwd: 'sub' })).stdout.trim()).toBe(join(ws.root, 'sub'));
    expect((await run('pwd')).stdout.trim()).toBe(ws.root);
  });

  it('caps the output', async () => {
    const result = await run('head -c 100000 /dev/zero | tr "\\0" x', { maxOutputBytes: 1000 });
    expect(result.stdout).toHaveLength(1000);
    expect(result.truncated).toBe(true);
  });

  it('kills the whole tree (grandchildren included) on timeout', async () => {
    const error = await run(`sleep ${sleepOf(317)} & sleep ${sleepOf(317)}`, { timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('command_timeout');
    expect(await liveWithMarker(sleepOf(317))).toEqual([]);
  });

  it('kills the whole tree on cancel', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error = await run(
      `sleep ${sleepOf(318)} & sleep ${sleepOf(318)}`,
      {},
      { signal: controller.signal },
    ).catch((e: unknown) => e);
    expect((error as ToolError).code).toBe('cancelled');
    expect(await liveWithMarker(sleepOf(318))).toEqual([]);
  });

  it('leaves no background process behind after the command exits', async () => {
    await run(`(sleep ${sleepOf(319)} &) ; sleep ${sleepOf(320)} & echo started`);
    expect(await liveWithMarker(sleepOf(319))).toEqual([]);
    expect(await liveWithMarker(sleepOf(320))).toEqual([]);
  });

  it('never shows a secret the command echoes into its failure to the model', async () => {
    const redactor = new Redactor();
    const value = 'sk-live-0123456789abcdef';
    const secrets = createSecretResolver(new MemorySecretStore({ deploy: value }), redactor);
    const args = { command: 'echo "using $DEPLOY_TOKEN" >&2; echo "out $DEPLOY_TOKEN"; exit 3' };
    const ctx = ws.context(ws.decide('shell', args), { secrets });
    const error = await shell({ env: { DEPLOY_TOKEN: { secret: 'deploy' } } })
      .execute(args, ctx)
      .catch((e: unknown) => e);
    expect((error as ToolError).code).toBe('command_failed');
    expect(JSON.stringify((error as ToolError).details)).toContain(value);
    const observation = toObservation({ ok: false, error }, redactor);
    expect(observation.content).not.toContain(value);
    expect(observation.content).not.toContain('0123456789abcdef');
    expect(observation.content).toContain('[REDACTED]');
    expect(observation.content).toContain('command_failed');
  });
});
