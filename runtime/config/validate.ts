import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Cron } from 'croner';
import { isMcpToolName } from '../../policy/mcp.ts';
import { isCredentialLikeName, isNeverSetName } from '../processes/env.ts';
import { registryFromConfig } from './adapters/tool-registry.ts';
import { ConfigError } from './errors.ts';
import { ruleExampleProblems } from './rule-examples.ts';
import { hasControlChars, type Config } from './schema.ts';
import { didYouMean } from './suggest.ts';

/** Problems of ids that must be unique in one list: `<list>[i].id: duplicate <what> id "x"`. */
function duplicateIds(list: readonly unknown[], at: string, what: string): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  list.forEach((item, i) => {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') return;
    if (seen.has(id)) problems.push(`${at}[${i}].id: duplicate ${what} id ${JSON.stringify(id)}`);
    seen.add(id);
  });
  return problems;
}

function checkCron(pattern: string, at: string): string | null {
  try {
    new Cron(pattern, { paused: true }).stop();
    return null;
  } catch (err) {
    return `${at}: invalid cron pattern ${JSON.stringify(pattern)}: ${(err as Error).message}`;
  }
}

/**
 * Whether a rule's `tool` (an exact name or a prefix ending in `*`) names something this config
 * can hold; a problem line when not. MCP servers may offer tools the config does not list, so an
 * `mcp:<server>:…` name only needs its server to be configured; `mcp:*` is always accepted.
 */
function checkToolName(
  pattern: string,
  at: string,
  names: readonly string[],
  servers: readonly string[],
): string | null {
  const wildcard = pattern.endsWith('*');
  const text = wildcard ? pattern.slice(0, -1) : pattern;
  if (isMcpToolName(text)) {
    const rest = text.slice('mcp:'.length);
    const colon = rest.indexOf(':');
    const notAName = `${at}: ${JSON.stringify(pattern)} is not a tool name: MCP tools are named "mcp:<server>:<tool>"`;
    if (colon === -1) {
      if (!wildcard) return notAName;
      if (rest === '' || servers.some((s) => s.startsWith(rest))) return null;
    } else {
      const server = rest.slice(0, colon);
      if (servers.includes(server)) return wildcard || colon < rest.length - 1 ? null : notAName;
    }
    const server = colon === -1 ? rest : rest.slice(0, colon);
    return `${at}: unknown MCP server ${JSON.stringify(server)} in ${JSON.stringify(pattern)}${didYouMean(server, servers)} (servers are configured under mcp.servers)`;
  }
  if (wildcard) {
    if (names.some((n) => n.startsWith(text))) return null;
    return `${at}: no tool matches ${JSON.stringify(pattern)}`;
  }
  if (names.includes(pattern)) return null;
  return `${at}: unknown tool ${JSON.stringify(pattern)}${didYouMean(pattern, names)}`;
}

/**
 * Checks what the schema cannot see, without touching the file system: one primary root, unique
 * ids (roots, rules, scheduled tasks, goal loops, platforms), agents that exist, cron patterns
 * croner accepts, and tool names (rules and `agents.<id>.tools`) that exist in the registry of
 * this config (built-ins, `tools.*`, `mcp:<server>:<tool>`). Throws `ConfigError`.
 */
export function checkConsistency(config: Config, file: string, dir: string, examples = true): void {
  const problems: string[] = [];
  const { roots } = config.workspace;
  const primaries = roots.filter((r) => r.primary === true);
  if (roots.length > 1 && primaries.length !== 1) {
    problems.push(`workspace.roots: exactly one root must be "primary": true, found ${primaries.length}`);
  }
  problems.push(...duplicateIds(roots, 'workspace.roots', 'root'));
  problems.push(...duplicateIds(config.surfaces.scheduled, 'surfaces.scheduled', 'scheduled task'));
  problems.push(...duplicateIds(config.surfaces.goalLoops, 'surfaces.goalLoops', 'goal loop'));
  problems.push(...duplicateIds(config.surfaces.platforms, 'surfaces.platforms', 'platform'));

  const agents = Object.keys(config.agents);
  const unknownAgent = (agent: string, at: string): void => {
    if (!Object.hasOwn(config.agents, agent))
      problems.push(`${at}: unknown agent ${JSON.stringify(agent)}${didYouMean(agent, agents)}`);
  };
  config.surfaces.scheduled.forEach((s, i) => {
    unknownAgent(s.agent, `surfaces.scheduled[${i}].agent`);
    const bad = checkCron(s.cron, `surfaces.scheduled[${i}].cron`);
    if (bad !== null) problems.push(bad);
  });
  config.surfaces.goalLoops.forEach((g, i) => {
    unknownAgent(g.agent, `surfaces.goalLoops[${i}].agent`);
    // The live actor tree (GET /v1/actors, snotra inspect) names agents and goals by their ids.
    if (Object.hasOwn(config.agents, g.id))
      problems.push(
        `surfaces.goalLoops[${i}].id: ${JSON.stringify(g.id)} is also an agent's id; a goal loop needs an id of its own`,
      );
  });
  if (config.surfaces.chat?.agent !== undefined)
    unknownAgent(config.surfaces.chat.agent, 'surfaces.chat.agent');
  config.surfaces.platforms.forEach((p, i) => {
    unknownAgent(p.agent, `surfaces.platforms[${i}].agent`);
    problems.push(...checkPlatform(p, `surfaces.platforms[${i}]`));
  });

  // Without a registry (its own problems are reported) tool names cannot be checked.
  let names: string[] | null = null;
  try {
    names = registryFromConfig({ config, file, dir }).names();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const servers = Object.keys(config.mcp.servers);
  for (const [id, server] of Object.entries(config.mcp.servers)) {
    problems.push(...mcpEnvProblems(id, server.env));
  }
  for (const [agent, a] of Object.entries(config.agents)) {
    problems.push(...duplicateIds(a.rules, `agents.${agent}.rules`, 'rule'));
    if (names === null) continue;
    const known = names;
    a.rules.forEach((r, i) => {
      if (r.tool === undefined) return;
      const bad = checkToolName(r.tool, `agents.${agent}.rules[${i}].tool`, known, servers);
      if (bad !== null) problems.push(bad);
    });
    a.tools?.forEach((t, i) => {
      const at = `agents.${agent}.tools[${i}]`;
      const bad = t.endsWith('*')
        ? `${at}: list exact tool names here, not a pattern (${JSON.stringify(t)})`
        : checkToolName(t, at, known, servers);
      if (bad !== null) problems.push(bad);
    });
  }
  if (examples) problems.push(...ruleExampleProblems(config, null));
  if (problems.length > 0) throw new ConfigError(file, problems);
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * What the schema cannot see of one platform connection: `apiBase` is an http(s) URL without
 * credentials, query or fragment (the bot token is appended to its path, so anything else there
 * would end up beside it), plain http only to a loopback server (the token would travel in
 * clear text); `allowedChats` has no duplicates.
 */
function checkPlatform(p: Config['surfaces']['platforms'][number], at: string): string[] {
  const problems: string[] = [];
  if (p.apiBase !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(p.apiBase);
    } catch {
      problems.push(`${at}.apiBase: ${JSON.stringify(p.apiBase)} is not a URL`);
    }
    if (url !== null) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:')
        problems.push(`${at}.apiBase: expected an http(s) URL, got ${JSON.stringify(url.protocol)}`);
      else if (url.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname))
        problems.push(
          `${at}.apiBase: plain http is only allowed to a loopback server (the bot token would travel in clear text); use https`,
        );
      if (url.username !== '' || url.password !== '')
        problems.push(`${at}.apiBase: must not hold credentials (the token is a secret reference)`);
      if (url.search !== '' || url.hash !== '')
        problems.push(`${at}.apiBase: must not have a query or fragment`);
    }
  }
  const seen = new Set<number>();
  p.allowedChats?.forEach((c, j) => {
    if (seen.has(c)) problems.push(`${at}.allowedChats[${j}]: duplicate chat id ${c}`);
    seen.add(c);
  });
  return problems;
}

type Kind = 'dir' | 'file' | 'other' | 'missing' | 'unreadable';

function kindOf(path: string): Kind {
  try {
    const st = statSync(path);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'missing' : code === 'ENOTDIR' ? 'missing' : 'unreadable';
  }
}

/** The nearest ancestor of `path` that exists, and what it is. */
function nearestExisting(path: string): { at: string; kind: Kind } {
  let at = path;
  for (;;) {
    const kind = kindOf(at);
    if (kind !== 'missing') return { at, kind };
    const up = dirname(at);
    if (up === at) return { at, kind };
    at = up;
  }
}

/**
 * Checks the paths of an absolutized config against the file system, reading only (nothing is
 * created): every root exists and is a directory; the state dir is a directory or can be made
 * one (its nearest existing ancestor is a directory). Throws `ConfigError` naming each field.
 */
export function checkPaths(config: Config, file: string): void {
  const problems: string[] = [];
  // A relative path is checked as written; the folder it resolves against can bring its own.
  const resolved: [string, string][] = [
    ['stateDir', config.stateDir],
    ...config.workspace.roots.map((r, i): [string, string] => [`workspace.roots[${i}].path`, r.path]),
  ];
  for (const [at, path] of resolved) {
    if (hasControlChars(path))
      problems.push(`${at}: resolves to ${JSON.stringify(path)}, which holds control characters`);
  }
  if (problems.length > 0) throw new ConfigError(file, problems);
  config.workspace.roots.forEach((r, i) => {
    const kind = kindOf(r.path);
    const at = `workspace.roots[${i}].path`;
    if (kind === 'missing') problems.push(`${at}: ${JSON.stringify(r.path)} does not exist`);
    else if (kind === 'unreadable') problems.push(`${at}: ${JSON.stringify(r.path)} cannot be read`);
    else if (kind !== 'dir') problems.push(`${at}: ${JSON.stringify(r.path)} is a file, not a directory`);
  });
  const state = kindOf(config.stateDir);
  if (state === 'file' || state === 'other') {
    problems.push(`stateDir: ${JSON.stringify(config.stateDir)} is a file, not a directory`);
  } else if (state === 'unreadable') {
    problems.push(`stateDir: ${JSON.stringify(config.stateDir)} cannot be read`);
  } else if (state === 'missing') {
    const near = nearestExisting(config.stateDir);
    if (near.kind !== 'dir') {
      problems.push(
        `stateDir: ${JSON.stringify(config.stateDir)} cannot be created: ${JSON.stringify(near.at)} is ${near.kind === 'unreadable' ? 'not readable' : 'not a directory'}`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(file, problems);
}

/**
 * An MCP server's configured variables, checked as the process supervisor will: never
 * `NODE_OPTIONS`-like names, and credential-like names only from a secret reference.
 */
function mcpEnvProblems(
  id: string,
  env: Readonly<Record<string, string | { secret: string } | { env: string }>>,
): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    const at = `mcp.servers.${id}.env.${name}`;
    if (isNeverSetName(name))
      out.push(`${at}: this variable can make the server run injected code and is never passed`);
    else if (isCredentialLikeName(name) && typeof value === 'string') {
      out.push(
        `${at}: a credential-like variable must be a secret reference, e.g. { "secret": "${id}-token" }`,
      );
    }
  }
  return out;
}
