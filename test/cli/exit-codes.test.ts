import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliInProcess, type CliResult } from '../support/cli-in-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-exits-')));
const missing = join(dir, 'no-state-here');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(argv: string[]): Promise<CliResult> {
  return runCliInProcess(argv, dir);
}

describe('exit codes: the README table, the same for every state command', () => {
  const STATE_COMMANDS = [
    ['runs', 'list'],
    ['inbox', 'list'],
    ['grants', 'list'],
    ['tasks'],
    ['audit'],
    ['audit', '--verify'],
  ];

  it.each(STATE_COMMANDS.map((c) => [c.join(' '), c] as const))(
    'a missing database: %s exits 1 naming the file, as JSON with --json',
    async (_name, argv) => {
      const json = await cli([...argv, '--json', '--state-dir', missing]);
      expect(json.code).toBe(1);
      expect(json.err).toBe('');
      const { error } = JSON.parse(json.out) as { error: { code: string; message: string } };
      expect(error.message).toContain(join(missing, 'snotra.db'));
      expect(error.code).toMatch(/^(no_state|audit_unavailable)$/);
      const text = await cli([...argv, '--state-dir', missing]);
      expect(text).toMatchObject({ code: 1, out: '' });
      expect(text.err).toContain(join(missing, 'snotra.db'));
    },
  );

  it.each(STATE_COMMANDS.map((c) => [c.join(' '), c] as const))(
    'a usage error: %s with an unknown flag exits 2',
    async (_name, argv) => {
      const r = await cli([...argv, '--bogus', '--json', '--state-dir', missing]);
      expect(r.code).toBe(2);
      expect((JSON.parse(r.out) as { error: { code: string } }).error.code).toBe('usage');
    },
  );
});

describe('JSON on stdout through npm', () => {
  const check = ['policy', 'check', '--tool', 'read_file', '--args', '{"path":"/etc/shadow"}', '--json'];
  const pure = (stdout: string) => {
    const lines = stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ decision: 'deny' });
  };

  it('`npx snotra … --json` prints nothing but the JSON line', () => {
    const r = spawnSync('npx', ['--offline', 'snotra', ...check], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    expect(r.status).toBe(11);
    pure(r.stdout);
  });

  it('`npm run -s snotra -- … --json` prints nothing but the JSON line (without -s npm prints its banner)', () => {
    const r = spawnSync('npm', ['run', '-s', 'snotra', '--', ...check], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    expect(r.status).toBe(11);
    pure(r.stdout);
  });
});
