import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ToolRule } from '../../policy/rules.ts';
import {
  createPolicyEnvironment,
  effectivePolicy,
  type EffectivePolicy,
  readActiveGrants,
  registryFromConfig,
  resolveConfig,
} from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';

const USAGE = 'usage: snotra policy show [--config F] [--state-dir D] [--agent A] [--json]';

/** What a rule matches, in the words of its config fields. */
function ruleText(r: ToolRule): string {
  const parts: string[] = [];
  if (r.tool !== undefined) parts.push(`tool ${r.tool}`);
  if (r.risk !== undefined) parts.push(`risk ${r.risk}`);
  if (r.source !== undefined) parts.push(`source ${r.source}`);
  if (r.command !== undefined) parts.push(`command ${JSON.stringify(r.command)}`);
  if (r.path !== undefined) parts.push(`path ${JSON.stringify(r.path)}${r.access ? ` (${r.access})` : ''}`);
  if (r.target !== undefined) parts.push(`target ${JSON.stringify(r.target)}`);
  return parts.join(', ');
}

/** The effective policy as text, one section per agent, then what every agent shares. */
export function policyText(p: EffectivePolicy): string {
  const out: string[] = [];
  out.push(`config: ${p.config ?? '(embedded defaults)'}`, `state dir: ${p.stateDir}`);
  for (const [id, a] of Object.entries(p.agents)) {
    out.push('', `agent ${id}: mode ${a.mode}, ${a.interaction}`);
    out.push(`  tools${a.allTools ? ' (every registered tool: the agent names no list)' : ''}:`);
    const width = Math.max(4, ...a.tools.map((t) => t.name.length));
    for (const t of a.tools) {
      const what =
        t.status === 'ok'
          ? `${t.risk ?? ''} ${t.approvalDefault ?? ''}${t.alwaysAsk ? ' always-ask' : ''}`
          : `${t.status}: every call needs a human`;
      out.push(`    ${t.name.padEnd(width)}  ${what}  [${t.from}]`);
    }
    out.push('  rules:');
    if (a.rules.length === 0) out.push('    (none)');
    for (const r of a.rules) out.push(`    ${r.id}: ${r.effect} ${ruleText(r)}  [${r.from}]`);
  }
  out.push('', 'roots:');
  for (const r of p.roots) {
    const deny = r.deny.length > 0 ? `  deny ${r.deny.map((g) => JSON.stringify(g)).join(', ')}` : '';
    out.push(`  ${r.id}: ${r.path}  ${r.access}${r.primary ? ', primary' : ''}${deny}  [${r.from}]`);
  }
  for (const kind of ['sensitive', 'never-writable'] as const) {
    const rules = p.sensitivePaths.filter((r) => r.kind === kind);
    out.push(
      '',
      `${kind} paths (${rules.length}, denied in every mode${kind === 'never-writable' ? ' for writes' : ''}):`,
    );
    for (const r of rules) out.push(`  ${r.id}: ${r.patterns.join(', ')}  [${r.from}]`);
  }
  out.push(
    '',
    `hardline rules (${p.hardline.length}, denied in every mode): ${p.hardline.map((h) => h.id).join(', ')}`,
  );
  out.push('', 'grants:');
  if (p.grants === null) {
    out.push('  (no database in the state dir yet: no grants)');
  } else {
    if (p.grants.session.length + p.grants.standing.length === 0) out.push('  (none active)');
    for (const g of p.grants.session) {
      const target = g.target === null ? 'any target' : `target ${JSON.stringify(g.target)}`;
      out.push(
        `  session ${g.id}: ${g.tool}, ${target}, session ${g.sessionId}, by ${g.grantedBy} at ${g.createdAt}`,
      );
    }
    for (const g of p.grants.standing) {
      const owner = `task ${g.ownerTaskId}${g.agent === null ? '' : ` (agent ${g.agent})`}`;
      out.push(
        `  standing ${g.id}: ${g.tool}, target ${JSON.stringify(g.target)}, ${owner}, by ${g.grantedBy} at ${g.createdAt}`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * `snotra policy show`: the effective policy per agent — mode, tools, rules with where each came
 * from, roots, sensitive paths, hardline rules, and the active grants of the state dir (read
 * through a read-only store; nothing is created or changed).
 */
export async function policyShowCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        'state-dir': { type: 'string' },
        agent: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const loaded = resolveConfig(values.config, cwd);
  const stateDir =
    values['state-dir'] === undefined ? loaded.config.stateDir : resolve(cwd, values['state-dir']);
  const shown = { ...loaded, config: { ...loaded.config, stateDir } };
  const env = await createPolicyEnvironment(shown);
  const policy = effectivePolicy(
    shown,
    registryFromConfig(shown),
    env.paths,
    readActiveGrants(stateDir),
    values.agent,
  );
  io.stdout(values.json ? `${JSON.stringify(policy)}\n` : policyText(policy));
  return ExitCode.ok;
}
