import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_SPECS, type CommandSpec } from '../../surfaces/cli/commands.ts';
import { runCliInProcess, type CliResult } from '../support/cli-in-process.ts';

/**
 * Generated from COMMAND_SPECS, so a new command is covered without being named here: a misspelt
 * flag of every command is a usage error (exit 2) that names the flag meant, as plain text on
 * stderr, and — on every command that takes `--json` — as one JSON error line on stdout with
 * nothing on stderr. The typo is each command's longest flag with its last letter dropped (one
 * edit away from it, further from every other flag of the same command).
 */
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-every-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(argv: string[]): Promise<CliResult> {
  return runCliInProcess(argv, dir);
}

function longestFlag(spec: CommandSpec): string {
  const names = spec.options.map(([flags]) => flags.split(' ')[0] as string);
  return names.reduce((a, b) => (b.length > a.length ? b : a));
}

const takesJson = (spec: CommandSpec) => spec.options.some(([flags]) => flags.split(' ')[0] === '--json');

const withFlags = COMMAND_SPECS.filter((s) => s.options.length > 0);

describe('a misspelt flag on every command', () => {
  it.each(COMMAND_SPECS.filter((s) => s.options.length === 0).map((s) => [s.path.join(' '), s] as const))(
    'snotra %s (no flags of its own): any flag is exit 2 naming it, nothing on stdout',
    async (_name, spec) => {
      const r = await cli([...spec.path, '--jsn']);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain('--jsn');
    },
  );

  it.each(withFlags.map((s) => [s.path.join(' '), s] as const))(
    'snotra %s: exit 2 naming the flag meant, nothing on stdout',
    async (_name, spec) => {
      const meant = longestFlag(spec);
      const typo = meant.slice(0, -1);
      const r = await cli([...spec.path, typo]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(typo);
      expect(r.err).toContain(`did you mean ${JSON.stringify(meant)}?`);
    },
  );

  it.each(COMMAND_SPECS.filter(takesJson).map((s) => [s.path.join(' '), s] as const))(
    'snotra %s --json: the same error as one JSON line on stdout, nothing on stderr',
    async (_name, spec) => {
      const meant = longestFlag(spec);
      const typo = meant.slice(0, -1);
      const r = await cli([...spec.path, '--json', typo]);
      expect(r.code).toBe(2);
      expect(r.err).toBe('');
      const lines = r.out.trim().split('\n');
      expect(lines).toHaveLength(1);
      const value = JSON.parse(lines[0] as string) as { error: { code: string; message: string } };
      expect(Object.keys(value)).toEqual(['error']);
      expect(value.error.code).toBe('usage');
      expect(value.error.message).toContain(`did you mean ${JSON.stringify(meant)}?`);
    },
  );
});
