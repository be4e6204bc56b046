import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import {
  chooseSecretBackend,
  CONFIG_FILE_NAME,
  parseConfig,
  type SecretBackendChoice,
  type StateEnv,
} from '../../runtime/index.ts';
import { checkModelFlags, type InitModel } from './init/choices.ts';
import { chooseModel } from './init/model.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';
import { packageFile } from './package-root.ts';

const USAGE =
  'usage: snotra init [--config F] [--state-dir D] [--force] [--provider P [--model M] [--base-url URL] [--api-key-env VAR]]';

/** The JSON Schema shipped with this package (also exported as `snotra-runtime/schema.json`). */
const SCHEMA_FILE = packageFile('schema/snotra.config.schema.json');

/** How `$schema` names the shipped schema from the config's folder: a relative path. */
function schemaRef(configDir: string): string {
  const rel = relative(configDir, SCHEMA_FILE).split(sep).join('/');
  return rel.startsWith('../') ? rel : `./${rel}`;
}

/**
 * The starter config: the defaults written out, each section explained in a `$comment`;
 * `secrets.backend` as given (`chooseSecretBackend`: the OS keyring where one answers, else env);
 * the assistant's model when one was chosen.
 */
export function starterConfig(
  configDir: string,
  stateDir?: string,
  secretsBackend: 'os' | 'env' = 'os',
  model: InitModel | null = null,
): Record<string, unknown> {
  return {
    $schema: schemaRef(configDir),
    $comment:
      'Snotra Runtime config. Every key is described in the JSON Schema named by $schema (hover in your editor); unknown keys are errors. ' +
      'workspace.roots: the folders tools may use. agents: each agent with its permission mode and rules (rules can only ask or deny). ' +
      'tools: security metadata of extension and skill tools. mcp.servers: MCP servers to start. surfaces.scheduled: cron tasks. ' +
      'stateDir: where the runtime keeps its database (default: outside the workspace). Check it with: snotra policy check --tool read_file --args \'{"path":"README.md"}\'.',
    ...(stateDir === undefined ? {} : { stateDir }),
    workspace: {
      roots: [
        {
          $comment:
            'This folder, read-write. Add more roots with "access": "read" for folders tools may only read.',
          id: 'workspace',
          path: '.',
          access: 'read-write',
          primary: true,
        },
      ],
    },
    agents: {
      assistant: {
        $comment:
          'mode "ask": side effects need your approval. Add "model": { "provider": "openai-compatible", "baseUrl": "...", "model": "...", "apiKey": { "secret": "..." } } for snotra run.',
        mode: 'ask',
        ...(model === null ? {} : { model }),
        rules: [{ id: 'no-npm-publish', command: 'npm publish', effect: 'deny' }],
      },
    },
    tools: {},
    mcp: { servers: {} },
    surfaces: { scheduled: [] },
    secrets: { backend: secretsBackend },
  };
}

/** `path` (which need not exist yet) with its nearest existing folder's real spelling. */
function realSpelling(path: string): { readonly real: string; readonly existing: string } | null {
  let dir = path;
  while (!existsSync(dir) || !statSync(dir).isDirectory()) {
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
  const existing = realpathSync(dir);
  return { existing, real: resolve(existing, relative(dir, path)) };
}

/** The top of the git work tree holding the folder `dir`, or null. */
function gitTopLevel(dir: string): string | null {
  try {
    const top = execFileSync('git', ['-C', dir, 'rev-parse', '--show-toplevel'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
      killSignal: 'SIGKILL',
    }).trim();
    return top === '' ? null : top;
  } catch {
    // Not a work tree (or git is not installed): nothing to ignore.
    return null;
  }
}

/** Whether a `.gitignore` line already ignores the folder `entry` (`/a/b/`), in any usual spelling. */
function alreadyListed(lines: readonly string[], entry: string): boolean {
  const bare = entry.replace(/^\/|\/$/g, '');
  const spellings = new Set([bare, `${bare}/`, `/${bare}`, `/${bare}/`]);
  return lines.some((l) => spellings.has(l.trim()));
}

type GitignoreResult =
  | { readonly kind: 'outside' }
  | { readonly kind: 'is-top'; readonly top: string }
  | { readonly kind: 'listed' | 'added'; readonly file: string; readonly entry: string };

/** Adds the state dir to its work tree's `.gitignore` (created when missing), once. */
function ignoreStateDir(stateDir: string): GitignoreResult {
  const spelt = realSpelling(stateDir);
  const top = spelt === null ? null : gitTopLevel(spelt.existing);
  if (spelt === null || top === null) return { kind: 'outside' };
  const rel = relative(top, spelt.real);
  if (rel === '') return { kind: 'is-top', top };
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return { kind: 'outside' };
  const entry = `/${rel.split(sep).join('/')}/`;
  const file = resolve(top, '.gitignore');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (alreadyListed(text.split(/\r?\n/), entry)) return { kind: 'listed', file, entry };
  const sepLine = text === '' || text.endsWith('\n') ? '' : '\n';
  writeFileSync(file, `${text}${sepLine}# Snotra Runtime state dir (snotra init)\n${entry}\n`);
  return { kind: 'added', file, entry };
}

/**
 * `snotra init`: writes a starter `snotra.config.json` (never over an existing file unless
 * `--force`), checked by the config loader before it is written, and adds the state dir to the
 * `.gitignore` of the git work tree it lies in, if any. The assistant's model comes from
 * `--provider` (and `--model`, `--base-url`, `--api-key-env`), or from a question on a terminal
 * that offers the local servers that answer (Ollama on :11434, llama.cpp on :8080).
 */
export async function initCommand(
  argv: string[],
  io: CliIo,
  cwd: string,
  env: StateEnv & Readonly<Record<string, string | undefined>> = process.env,
  chooseBackend: () => Promise<SecretBackendChoice> = () => chooseSecretBackend(),
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        'state-dir': { type: 'string' },
        force: { type: 'boolean', default: false },
        provider: { type: 'string' },
        'base-url': { type: 'string' },
        model: { type: 'string' },
        'api-key-env': { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const modelFlags = checkModelFlags({
    provider: values.provider,
    baseUrl: values['base-url'],
    model: values.model,
    apiKeyEnv: values['api-key-env'],
  });
  const file = resolve(cwd, values.config ?? CONFIG_FILE_NAME);
  const dir = dirname(file);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    io.stderr(`snotra init: ${dir}: no such folder for the config file\n`);
    return ExitCode.failure;
  }
  if (existsSync(file) && !values.force) {
    io.stderr(`snotra init: ${file} already exists; not overwritten (use --force to replace it)\n`);
    return ExitCode.failure;
  }
  const terminal = modelFlags.provider === null ? (io.approvalTerminal?.() ?? null) : null;
  let chosen;
  try {
    chosen = await chooseModel(modelFlags, env, terminal);
  } finally {
    terminal?.close();
  }
  const { backend, reason } = await chooseBackend();
  const text = `${JSON.stringify(starterConfig(dir, values['state-dir'], backend, chosen.model), null, 2)}\n`;
  // The starter must load as written: a bad --state-dir is refused before anything is written.
  const loaded = parseConfig(text, file, dir, { env });
  writeFileSync(file, text, { flag: values.force ? 'w' : 'wx' });
  io.stdout(`wrote ${file}\n`);
  // Which backend, and why: the keyring probe's outcome (escaped: it is the platform's text).
  const why = oneLine(reason, 400);
  io.stdout(
    backend === 'os'
      ? `secrets: the OS keyring (secrets.backend "os"): ${why}\n`
      : `secrets: no OS keyring answers here, so secrets.backend is "env" (SNOTRA_SECRET_<NAME> variables, or { "env": "VARIABLE" } references); the keyring probe said: ${why}\n`,
  );
  for (const line of chosen.lines) io.stdout(`${line}\n`);
  const stateDir = loaded.config.stateDir;
  const ignored = ignoreStateDir(stateDir);
  switch (ignored.kind) {
    case 'added':
      io.stdout(`added ${ignored.entry} to ${ignored.file} (the state dir ${stateDir})\n`);
      break;
    case 'listed':
      io.stdout(`${ignored.file} already lists ${ignored.entry} (the state dir ${stateDir})\n`);
      break;
    case 'is-top':
      io.stderr(
        `snotra init: the state dir ${stateDir} is the top of a git work tree; .gitignore left unchanged\n`,
      );
      break;
    case 'outside':
      io.stdout(`state dir ${stateDir} (outside any git work tree; .gitignore unchanged)\n`);
      break;
  }
  return ExitCode.ok;
}
