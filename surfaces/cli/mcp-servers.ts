import { parseArgs } from 'node:util';
import {
  inspectMcpServers,
  type McpServerReport,
  resolveConfig,
  UnknownMcpServerError,
} from '../../runtime/index.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';

const USAGE =
  'usage: snotra mcp-servers list [--config F] [--json] | snotra mcp-servers tools ID [--config F] [--json]';

function statusLine(r: McpServerReport): string {
  const s = r.status;
  const parts = [
    `${s.id}: ${s.state}`,
    s.serverName ? `server ${s.serverName}` : null,
    s.protocolVersion ? `protocol ${s.protocolVersion}` : null,
    `${s.tools} tools`,
    `sandbox ${r.sandbox ?? 'none'}`,
    s.lastError ? `last error ${s.lastError.code}: ${s.lastError.message}` : null,
  ].filter((p) => p !== null);
  const lines = [oneLine(parts.join(', '), 2000)];
  for (const p of s.listingProblems) lines.push(`  ${oneLine(p, 500)}`);
  return lines.join('\n');
}

function toolLines(r: McpServerReport): string[] {
  const out = [statusLine(r)];
  for (const t of r.tools) {
    const m = t.metadata;
    const what = t.offered
      ? `${m.risk} ${m.approvalDefault}${m.pathArguments ? ` paths=${m.pathArguments.join(',')}` : ''}${m.idempotent ? ' idempotent' : ''}`
      : 'not offered';
    out.push(oneLine(`  ${t.name}  ${what}`, 500));
    for (const w of t.why) out.push(oneLine(`      ${w}`, 500));
  }
  return out;
}

/** `snotra mcp-servers list|tools ID`: start the configured MCP servers, show status and tools, stop them. */
export async function mcpServersCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const [action, ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { config: { type: 'string' }, json: { type: 'boolean', default: false } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const loaded = resolveConfig(values.config, cwd);
  if (action === 'list') {
    if (positionals.length > 0) throw new UsageError(`mcp-servers list takes no arguments\n${USAGE}`);
    const reports = await inspectMcpServers(loaded);
    for (const r of reports) {
      io.stdout(
        values.json ? `${JSON.stringify({ ...r.status, sandbox: r.sandbox })}\n` : `${statusLine(r)}\n`,
      );
    }
    if (!values.json && reports.length === 0) io.stdout('no MCP servers are configured (mcp.servers)\n');
    return ExitCode.ok;
  }
  if (action === 'tools') {
    const id = positionals[0];
    if (id === undefined || positionals.length > 1)
      throw new UsageError(`mcp-servers tools needs one server id\n${USAGE}`);
    let reports: McpServerReport[];
    try {
      reports = await inspectMcpServers(loaded, [id]);
    } catch (error) {
      if (error instanceof UnknownMcpServerError) throw new CommandFailure(error.code, error.message);
      throw error;
    }
    const r = reports[0] as McpServerReport;
    if (values.json) {
      io.stdout(`${JSON.stringify({ ...r.status, sandbox: r.sandbox, tools: r.tools })}\n`);
    } else {
      for (const l of toolLines(r)) io.stdout(`${l}\n`);
    }
    return r.status.state === 'ready' ? ExitCode.ok : ExitCode.failure;
  }
  throw new UsageError(USAGE);
}
