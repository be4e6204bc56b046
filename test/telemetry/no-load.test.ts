import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childNodeArgs } from '../support/child-scripts.ts';

const PRELOAD = fileURLToPath(new URL('./fixtures/load-log.mjs', import.meta.url));
const TELEMETRY_MODULE = /@opentelemetry\/|\/runtime\/telemetry\//;

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Runs one task in a runtime child (test/support/runtime-child.ts) with every module it
 * resolves logged; returns those module URLs.
 */
async function loadedModules(telemetry: unknown): Promise<string[]> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-otel-load-')));
  dirs.push(dir);
  mkdirSync(join(dir, 'project'));
  writeFileSync(
    join(dir, 'snotra.config.json'),
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: { worker: { mode: 'ask' } },
      ...(telemetry === undefined ? {} : { telemetry }),
    }),
  );
  writeFileSync(join(dir, 'script.json'), JSON.stringify([{ respond: { kind: 'final', text: 'ok' } }]));
  const log = join(dir, 'modules.log');
  const child = spawn(
    process.execPath,
    ['--import', PRELOAD, ...childNodeArgs('test/support/runtime-child.ts'), dir],
    {
      env: { ...process.env, SNOTRA_TEST_LOAD_LOG: log },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(code, out).toBe(0);
  expect(out).toContain('done completed');
  return readFileSync(log, 'utf8').trim().split('\n');
}

describe('telemetry loading', () => {
  // One child (a runtime start costs seconds here); that the same modules do load with the key
  // is shown by test/telemetry/trace.test.ts, whose runtimes export spans.
  it('without a telemetry key no OpenTelemetry or runtime/telemetry module is loaded by a runtime that runs a task', async () => {
    const without = await loadedModules(undefined);
    // The log holds the runtime's own modules (the hook saw the product load)...
    expect(without.some((u) => /\/runtime\/runtime\.(ts|js)$/.test(u))).toBe(true);
    // ...and none of telemetry's.
    expect(without.filter((u) => TELEMETRY_MODULE.test(u))).toEqual([]);
  });
});
