import { parseArgs } from 'node:util';
import { explainDecision } from '../../policy/explain.ts';
import { createPolicyChecker, type PolicyChecker, resolveConfig } from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';

const USAGE = 'usage: snotra policy check [--config F] [--agent A] (--tool T --args JSON | --stdin) [--json]';

/** A line of `--stdin` input that could not be evaluated. */
interface LineError {
  readonly code: 'invalid_json' | 'invalid_line' | 'unknown_agent' | 'line_too_long';
  readonly message: string;
}

const MAX_LINE = 1_000_000;

function parseLine(
  line: string,
  lineNo: number,
): { tool: string; args: unknown; agent?: string } | LineError {
  if (line.length > MAX_LINE)
    return { code: 'line_too_long', message: `line ${lineNo}: longer than ${MAX_LINE} characters` };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { code: 'invalid_json', message: `line ${lineNo}: not valid JSON (${(err as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { code: 'invalid_line', message: `line ${lineNo}: expected an object {"tool","args","agent"?}` };
  }
  const v = value as Record<string, unknown>;
  if (typeof v.tool !== 'string')
    return { code: 'invalid_line', message: `line ${lineNo}: "tool" must be a string` };
  if (v.agent !== undefined && typeof v.agent !== 'string') {
    return { code: 'invalid_line', message: `line ${lineNo}: "agent" must be a string when present` };
  }
  return { tool: v.tool, args: v.args ?? {}, ...(typeof v.agent === 'string' ? { agent: v.agent } : {}) };
}

function exitFor(decision: string): ExitCode {
  if (decision === 'deny') return ExitCode.denied;
  if (decision === 'approval-required') return ExitCode.approvalRequired;
  return ExitCode.ok;
}

/**
 * `snotra policy check`: evaluates calls without executing them. With `--stdin`, one Decision
 * (or `{"error":{code,message}}`) line per input line, in order; a bad line never stops the rest.
 */
export async function policyCheckCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        agent: { type: 'string' },
        tool: { type: 'string' },
        args: { type: 'string' },
        stdin: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.stdin === (values.tool !== undefined))
    throw new UsageError(`give exactly one of --tool or --stdin\n${USAGE}`);
  if (values.stdin && values.args !== undefined)
    throw new UsageError(`--args goes with --tool, not --stdin\n${USAGE}`);

  const loaded = resolveConfig(values.config, cwd);
  const checker = await createPolicyChecker(loaded, { lazyShell: true });
  const defaultAgent = values.agent ?? checker.defaultAgent;

  if (!values.stdin) {
    let args: unknown = {};
    if (values.args !== undefined) {
      try {
        args = JSON.parse(values.args);
      } catch (err) {
        throw new UsageError(`--args is not valid JSON: ${(err as Error).message}`);
      }
    }
    const decision = await checker.decide(defaultAgent, { tool: values.tool as string, args });
    io.stdout(
      values.json ? `${JSON.stringify(decision)}\n` : `${explainDecision(values.tool as string, decision)}\n`,
    );
    return exitFor(decision.decision);
  }
  return checkLines(checker, defaultAgent, values.json, io);
}

async function checkLines(
  checker: PolicyChecker,
  defaultAgent: string,
  json: boolean,
  io: CliIo,
): Promise<number> {
  let lineNo = 0;
  let bad = 0;
  for await (const line of io.stdinLines()) {
    lineNo++;
    const parsed = parseLine(line, lineNo);
    let out: string;
    if ('code' in parsed) {
      bad++;
      out = json ? JSON.stringify({ error: parsed }) : `error: ${parsed.code}: ${parsed.message}`;
    } else {
      const agent = parsed.agent ?? defaultAgent;
      if (!checker.hasAgent(agent)) {
        bad++;
        const error: LineError = {
          code: 'unknown_agent',
          message: `line ${lineNo}: unknown agent ${JSON.stringify(agent)}`,
        };
        out = json ? JSON.stringify({ error }) : `error: ${error.code}: ${error.message}`;
      } else {
        const decision = await checker.decide(agent, { tool: parsed.tool, args: parsed.args });
        out = json ? JSON.stringify(decision) : explainDecision(parsed.tool, decision);
      }
    }
    io.stdout(`${out}\n`);
  }
  return bad > 0 ? ExitCode.failure : ExitCode.ok;
}
