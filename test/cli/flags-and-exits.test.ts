import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Util from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { COMMAND_SPECS, type CommandSpec } from '../../surfaces/cli/commands.ts';
import type { CliIo } from '../../surfaces/cli/io.ts';

/**
 * Every command's flags are declared twice: in surfaces/cli/commands.ts (help, suggestions) and in
 * the command's own node:util parseArgs call. This catches the two drifting apart, for every
 * command in COMMAND_SPECS (a new command is covered without being named here): parseArgs is
 * replaced by a recorder that stops the command right after reading its options, so nothing runs.
 */
const recorded = vi.hoisted(() => ({ configs: [] as { options?: Record<string, { type: string }> }[] }));
vi.mock('node:util', async (importOriginal) => {
  const util = await importOriginal<typeof Util>();
  return {
    ...util,
    parseArgs: (config: { options?: Record<string, { type: string }> }) => {
      recorded.configs.push(config);
      throw new Error('flags recorded');
    },
  };
});

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-flags-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const silent: CliIo = { stdout: () => {}, stderr: () => {}, stdinLines: async function* () {} };

/** `--config F` → config: string; `--json` → json: boolean. */
function documented(spec: CommandSpec): Map<string, string> {
  return new Map(
    spec.options.map(([flags]) => {
      const [name, value] = flags.split(' ');
      return [(name as string).replace(/^--/, ''), value === undefined ? 'boolean' : 'string'];
    }),
  );
}

async function accepted(spec: CommandSpec): Promise<Map<string, string>> {
  recorded.configs.length = 0;
  await spec.run([], silent, dir).catch(() => {});
  const config = recorded.configs.at(-1);
  if (config?.options === undefined)
    throw new Error(`snotra ${spec.path.join(' ')} does not read its flags with node:util parseArgs`);
  return new Map(
    Object.entries(config.options)
      .filter(([name]) => name !== 'help')
      .map(([name, o]) => [name, o.type]),
  );
}

describe('flags: commands.ts and each command’s parser agree', () => {
  it.each(COMMAND_SPECS.map((s) => [s.path.join(' '), s] as const))('snotra %s', async (_name, spec) => {
    const mine = documented(spec);
    const parsed = await accepted(spec);
    // Every flag in the help is parsed, with a value exactly when the help shows one.
    for (const [name, type] of mine) expect(parsed.get(name), `--${name}`).toBe(type);
    // A parser shared by a group (`inbox list|show|…`) may read flags of its siblings, none other.
    const group = COMMAND_SPECS.filter((s) => s.path.length > 1 && s.path[0] === spec.path[0]);
    const known = new Set([...mine.keys(), ...group.flatMap((s) => [...documented(s).keys()])]);
    expect([...parsed.keys()].filter((n) => !known.has(n)).map((n) => `--${n}`)).toEqual([]);
  });
});
