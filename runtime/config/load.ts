import { readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { z } from 'zod';
import { ConfigError, formatIssues } from './errors.ts';
import { parseJsonText } from './json-text.ts';
import type { LoadedConfig } from './loaded-config.ts';
import { ConfigSchema, type Config } from './schema.ts';
import { defaultStateDir, homeOf, type StateEnv } from './state-dir.ts';
import { checkConsistency, checkPaths } from './validate.ts';

export type { LoadedConfig } from './loaded-config.ts';

/** The config file name looked up in the current folder. */
export const CONFIG_FILE_NAME = 'snotra.config.json';

/** Options of config loading; the environment decides the default state dir and `~`. */
export interface LoadOptions {
  readonly env?: StateEnv;
  /** False: rules' examples are not run at load (`snotra policy test` runs and reports them itself). */
  readonly examples?: boolean;
}

type Parsed = z.infer<typeof ConfigSchema>;

function absolutize(parsed: Parsed, dir: string, env: StateEnv, file: string): Config {
  const problems: string[] = [];
  const abs = (p: string, at: string): string => {
    if (p === '~' || p.startsWith('~/')) return join(homeOf(env), p.slice(1));
    if (p.startsWith('~'))
      problems.push(`${at}: only "~" and "~/..." are expanded, got ${JSON.stringify(p)}`);
    return isAbsolute(p) ? p : resolve(dir, p);
  };
  const roots = parsed.workspace.roots.map((r, i) => ({
    ...r,
    path: abs(r.path, `workspace.roots[${i}].path`),
  }));
  const primary = roots.find((r) => r.primary === true) ?? roots[0];
  const stateDir =
    parsed.stateDir !== undefined
      ? abs(parsed.stateDir, 'stateDir')
      : defaultStateDir(primary?.path ?? dir, env);
  const config: Config = {
    ...parsed,
    stateDir,
    workspace: { roots },
    bus:
      parsed.bus.serverPath === undefined
        ? parsed.bus
        : { ...parsed.bus, serverPath: abs(parsed.bus.serverPath, 'bus.serverPath') },
    agents: Object.fromEntries(
      Object.entries(parsed.agents).map(([id, a]) => [
        id,
        a.model?.script
          ? { ...a, model: { ...a.model, script: abs(a.model.script, `agents.${id}.model.script`) } }
          : a,
      ]),
    ),
  };
  if (problems.length > 0) throw new ConfigError(file, problems);
  return config;
}

/**
 * Parses and validates config text. Throws `ConfigError` whose problems name the file and each
 * bad field's JSON path, what was expected and what was found (a syntax error by line and
 * column). Relative paths resolve against `dir` (itself made absolute); `~` against the home folder. Reads the file
 * system (roots, state dir) but never writes: nothing is created before the config is valid.
 */
export function parseConfig(
  text: string,
  file: string,
  dir: string,
  options: LoadOptions = {},
): LoadedConfig {
  const env = options.env ?? process.env;
  // A relative folder (`parseConfig(text, 'x.json', '.')`) is taken from the current folder, once.
  dir = resolve(dir);
  let raw: unknown;
  let duplicates: string[];
  try {
    ({ value: raw, problems: duplicates } = parseJsonText(text));
  } catch (err) {
    throw new ConfigError(file, [`not valid JSON: ${(err as Error).message}`], { cause: err });
  }
  const parsed = ConfigSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success)
    throw new ConfigError(file, [...duplicates, ...formatIssues(parsed.error.issues, ConfigSchema)]);
  if (duplicates.length > 0) throw new ConfigError(file, duplicates);
  // One primary root: a single root is primary whatever it says.
  const data = parsed.data;
  if (data.workspace.roots.length === 1 && data.workspace.roots[0]) data.workspace.roots[0].primary = true;
  const config = absolutize(data, dir, env, file);
  checkConsistency(config, file, dir, options.examples !== false);
  checkPaths(config, file);
  return { config, file, dir };
}

/** Loads and validates a config file (see `parseConfig`). */
export function loadConfig(file: string, options: LoadOptions = {}): LoadedConfig {
  const abs = resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(
      abs,
      [code === 'ENOENT' ? 'file not found' : `cannot read the file (${code ?? 'error'})`],
      { cause: err },
    );
  }
  return parseConfig(text, abs, dirname(abs), options);
}

/**
 * The config to run with: `--config F` when given, else `./snotra.config.json` when present,
 * else the embedded defaults (the folder as the primary read-write root, mode `ask`, state outside
 * the workspace: see `defaultStateDir`).
 */
export function resolveConfig(
  explicit: string | undefined,
  cwd: string,
  options: LoadOptions = {},
): LoadedConfig {
  if (explicit !== undefined) return loadConfig(resolve(cwd, explicit), options);
  const local = resolve(cwd, CONFIG_FILE_NAME);
  if (existsSync(local)) return loadConfig(local, options);
  return { ...parseConfig('{}', '(embedded defaults)', cwd, options), file: null };
}
