/**
 * One `tools/call` on a ready server, on what was decided: the tool still listed with the
 * declaration the decision was made on, arguments valid, path arguments re-checked and passed
 * canonical, the call bounded in time (cancelled with `notifications/cancelled`) and its result
 * bounded in size.
 */
import type { ReasonCode } from '../../policy/decision.ts';
import { ToolErrorCode } from '../tools/codes.ts';
import { ToolError, type ToolExecutionContext } from '../tools/types.ts';
import { McpErrorCode } from './codes.ts';
import type { McpConnection } from './connection.ts';
import { McpFailure } from './connection.ts';
import { classifyCallFailure } from './failure.ts';
import type { McpLimits } from './limits.ts';
import { boundResult, type McpToolResult } from './result.ts';

/** What a call needs besides the connection. */
export interface CallDeps {
  readonly limits: McpLimits;
  /** Whether servers run in the OS sandbox (without one, only a human-approved call runs). */
  readonly sandboxed: boolean;
  /** The tool's path arguments (from the user's override), re-checked at execution. */
  readonly pathArguments: (tool: string) => readonly string[];
  /** Scrubs registered secrets from a server's text before it is cut. */
  readonly redact: (text: string) => string;
}

/** Re-checks each decided path argument now and returns the arguments with canonical paths. */
function canonicalArgs(
  args: Record<string, unknown>,
  names: readonly string[],
  ctx: ToolExecutionContext,
): Record<string, unknown> {
  if (names.length === 0) return args;
  const out = { ...args };
  const access = ctx.decision.risk === 'write-local' ? 'write' : 'read';
  for (const argument of names) {
    const input = args[argument];
    if (input === undefined) continue;
    if (typeof input !== 'string') {
      throw new ToolError(McpErrorCode.invalidArguments, `${argument}: expected a path string`);
    }
    const decided = ctx.decision.targets.find((t) => t.argument === argument);
    if (decided === undefined || decided.input !== input) {
      throw new ToolError(
        ToolErrorCode.targetNotDecided,
        `the decision has no target for argument "${argument}"`,
      );
    }
    const now = ctx.paths.resolve(argument, input, access, ctx.roots);
    if (!now.ok) {
      throw new ToolError(
        now.reason satisfies ReasonCode,
        `refused at execution: ${argument} is no longer allowed`,
        {
          details: { rule: now.rule.id },
        },
      );
    }
    out[argument] = now.target.resolved ?? input;
  }
  return out;
}

function linked(
  signal: AbortSignal,
  ms: number,
): { signal: AbortSignal; timedOut: () => boolean; done: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, ms);
  const onAbort = (): void => controller.abort(new Error('cancelled'));
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Calls `tool` of `connection`. Guarantees (each a `ToolError` with the code named):
 * no sandbox and no human approval → `sandbox_unavailable`; server not ready →
 * `mcp_server_unavailable`; tool not in the current listing or filtered out →
 * `mcp_tool_not_listed`; declaration digest differs from the decision's → `mcp_tool_changed`;
 * arguments fail the schema → `invalid_arguments`; a path argument refused now → the policy's
 * reason; past the time limit → `mcp_call_timeout`, cancelled → `cancelled` (both after
 * `notifications/cancelled` went out); its answer over the line limit or not a valid result →
 * `mcp_invalid_response`; process gone after the request was written → `mcp_server_crashed`
 * (outcome unknown); process gone before it was written (waiting for a call slot behind a call
 * that crashed the server, or refused by a closed pipe) → `mcp_server_unavailable` (it never
 * ran); `isError` result → `mcp_tool_error` with the bounded content as details.
 */
export async function callMcpTool(
  connection: McpConnection,
  tool: string,
  args: Record<string, unknown>,
  ctx: ToolExecutionContext,
  deps: CallDeps,
): Promise<McpToolResult> {
  if (ctx.signal.aborted) throw new ToolError(McpErrorCode.cancelled, 'the call was cancelled');
  if (!deps.sandboxed && ctx.decision.reason === 'mode_allow') {
    throw new ToolError(
      ToolErrorCode.sandboxUnavailable,
      'no OS sandbox is available, so an MCP tool call needs a human approval before it runs',
    );
  }
  // Past the server's limit of calls in flight, a call waits here, unsent.
  let release: () => void;
  try {
    release = await connection.gate.acquire(ctx.signal);
  } catch {
    throw new ToolError(McpErrorCode.cancelled, 'the call was cancelled before it was sent');
  }
  try {
    return await callOnSlot(connection, tool, args, ctx, deps);
  } finally {
    release();
  }
}

/** The call itself, once it holds one of the server's call slots. */
async function callOnSlot(
  connection: McpConnection,
  tool: string,
  args: Record<string, unknown>,
  ctx: ToolExecutionContext,
  deps: CallDeps,
): Promise<McpToolResult> {
  let live: ReturnType<McpConnection['client']>;
  try {
    live = connection.client();
  } catch (error) {
    if (error instanceof McpFailure) throw new ToolError(error.code, error.message);
    throw error;
  }
  const listed = connection.tool(tool);
  if (listed === undefined || listed.filteredOut !== null) {
    throw new ToolError(
      McpErrorCode.toolNotListed,
      `MCP server "${connection.spec.id}" does not list a tool "${tool}" (now)`,
    );
  }
  if (ctx.decision.toolDigest !== listed.digest) {
    throw new ToolError(
      McpErrorCode.toolChanged,
      `the declaration of "${tool}" changed since the call was decided; propose the call again`,
    );
  }
  const problem = listed.check(args);
  if (problem !== null) throw new ToolError(McpErrorCode.invalidArguments, problem);
  // A fresh object per call: the transport knows this call's request by it (written or not).
  const sent = { ...canonicalArgs(args, deps.pathArguments(tool), ctx) };
  const ms = connection.spec.timeoutMs ?? deps.limits.callTimeoutMs;
  const bound = linked(ctx.signal, ms);
  let raw: unknown;
  try {
    // The SDK's own timeout is set past ours: our abort sends `notifications/cancelled`.
    raw = await live.client.callTool(
      { name: tool, arguments: sent },
      { signal: bound.signal, timeout: ms + 60_000 },
    );
  } catch (error) {
    if (bound.timedOut()) {
      throw new ToolError(McpErrorCode.callTimeout, `the call ran past ${ms} ms and was cancelled`);
    }
    if (ctx.signal.aborted) throw new ToolError(McpErrorCode.cancelled, 'the call was cancelled');
    const failure = classifyCallFailure(error, {
      server: connection.spec.id,
      fate: live.fate(sent),
      serverGone: !connection.isCurrent(live.generation),
      redact: deps.redact,
    });
    throw new ToolError(failure.code, failure.message);
  } finally {
    bound.done();
  }
  const result = boundResult(raw, deps.limits, deps.redact);
  const { isError, ...kept } = result;
  if (isError)
    throw new ToolError(McpErrorCode.toolError, `the tool "${tool}" reported an error`, { details: kept });
  return kept;
}
