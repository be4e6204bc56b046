import { readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigError, formatIssues } from './errors.ts';
import { ConfigSchema, type Config } from './schema.ts';

/** The config file name looked up in the current folder. */
export const CONFIG_FILE_NAME = 'snotra.config.json';

/** A validated config with every path made absolute, and where it came from. */
export interface LoadedConfig {
  readonly config: Config;
  /** The config file, or null for the embedded defaults. */
  readonly file: string | null;
  /** The folder relative paths were resolved against. */
  readonly dir: string;
}

function absolutize(config: Config, dir: string): Config {
  const abs = (p: string): string => (isAbsolute(p) || p.startsWith('~') ? p : resolve(dir, p));
  return {
    ...config,
    stateDir: abs(config.stateDir),
    workspace: { roots: config.workspace.roots.map((r) => ({ ...r, path: abs(r.path) })) },
    agents: Object.fromEntries(
      Object.entries(config.agents).map(([id, a]) => [
        id,
        a.model?.script ? { ...a, model: { ...a.model, script: abs(a.model.script) } } : a,
      ]),
    ),
  };
}

function checkRoots(config: Config, file: string): void {
  const problems: string[] = [];
  const primaries = config.workspace.roots.filter((r) => r.primary === true);
  if (config.workspace.roots.length > 1 && primaries.length !== 1) {
    problems.push(`workspace.roots: exactly one root must be "primary": true, found ${primaries.length}`);
  }
  const ids = new Set<string>();
  config.workspace.roots.forEach((r, i) => {
    if (ids.has(r.id)) problems.push(`workspace.roots[${i}].id: duplicate root id ${JSON.stringify(r.id)}`);
    ids.add(r.id);
  });
  for (const [agent, a] of Object.entries(config.agents)) {
    const ruleIds = new Set<string>();
    a.rules.forEach((r, i) => {
      if (ruleIds.has(r.id))
        problems.push(`agents.${agent}.rules[${i}].id: duplicate rule id ${JSON.stringify(r.id)}`);
      ruleIds.add(r.id);
    });
  }
  for (const s of config.surfaces.scheduled) {
    if (!Object.hasOwn(config.agents, s.agent))
      problems.push(`surfaces.scheduled[${s.id}].agent: unknown agent ${JSON.stringify(s.agent)}`);
  }
  if (problems.length > 0) throw new ConfigError(file, problems);
}

/**
 * Parses and validates config text. Throws `ConfigError` whose problems name each bad field's
 * JSON path, what was expected and what was found. Relative paths resolve against `dir`.
 */
export function parseConfig(text: string, file: string, dir: string): LoadedConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, [`not valid JSON: ${(err as Error).message}`], { cause: err });
  }
  const parsed = ConfigSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw new ConfigError(file, formatIssues(parsed.error.issues));
  checkRoots(parsed.data, file);
  // One primary root: a single root is primary whatever it says.
  const config = parsed.data;
  if (config.workspace.roots.length === 1 && config.workspace.roots[0])
    config.workspace.roots[0].primary = true;
  return { config: absolutize(config, dir), file, dir };
}

/** Loads and validates a config file (see `parseConfig`). */
export function loadConfig(file: string): LoadedConfig {
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
  return parseConfig(text, abs, dirname(abs));
}

/**
 * The config to run with: `--config F` when given, else `./snotra.config.json` when present,
 * else the embedded defaults (the folder as the primary read-write root, mode `ask`, state in
 * `./.snotra`).
 */
export function resolveConfig(explicit: string | undefined, cwd: string): LoadedConfig {
  if (explicit !== undefined) return loadConfig(resolve(cwd, explicit));
  const local = resolve(cwd, CONFIG_FILE_NAME);
  if (existsSync(local)) return loadConfig(local);
  return { ...parseConfig('{}', '(embedded defaults)', cwd), file: null };
}
