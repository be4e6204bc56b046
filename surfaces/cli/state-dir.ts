import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../../runtime/index.ts';
import { UsageError } from './io.ts';

/** The state dir a CLI command works on: `--state-dir D`, else the config's (`--config F`, ./snotra.config.json or the embedded defaults: outside the workspace). */
export function stateDirOf(values: { 'state-dir'?: string; config?: string }, cwd: string): string {
  if (values['state-dir'] !== undefined) return resolve(cwd, values['state-dir']);
  return resolveConfig(values.config, cwd).config.stateDir;
}

/**
 * The flags of a state command's subcommand — `--state-dir D`, `--config F`, `--json`, and the
 * string flags `extra` names (`platforms list --limit N --after CURSOR`) — parsed strictly, in
 * one call, with its positionals; a bad flag is a usage error followed by `usage`.
 */
export function parseStateArgs(args: string[], usage: string, extra: readonly string[] = []) {
  try {
    return parseArgs({
      args,
      options: {
        ...Object.fromEntries(extra.map((name) => [name, { type: 'string' as const }])),
        'state-dir': { type: 'string' },
        config: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${usage}`);
  }
}
