/**
 * What a failed `tools/call` tells the model, from what is known of its request: an answer the
 * client would not accept, a request that never reached the server, or one that did reach a
 * server that is gone (outcome unknown). Each is a different instruction to the model: the
 * first two did not (or did not visibly) run, the last may have.
 */
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { McpErrorCode } from './codes.ts';
import type { RequestFate } from './transport.ts';

/** What is known of the failed call. */
export interface CallFailureFacts {
  readonly server: string;
  /** What became of its request on the pipe. */
  readonly fate: RequestFate;
  /** Whether the server process the call was sent to is gone (exited, connection closed). */
  readonly serverGone: boolean;
  readonly redact: (text: string) => string;
}

const PIPE_CODES = new Set([
  'EPIPE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'mcp_pipe_closed',
]);

/** Whether `error` says the connection to the server was not there (closed, not connected, a broken pipe). */
function isConnectionError(error: unknown): boolean {
  if (error instanceof SdkError) {
    return error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && PIPE_CODES.has(code)) return true;
  return error instanceof Error && error.message === 'Not connected';
}

/**
 * Guarantees: an answer dropped for its size, or one the SDK found invalid, is
 * `mcp_invalid_response`; a request never written to the server, failed because the server or
 * its connection is gone, is `mcp_server_unavailable` (it did not run: safe to retry); a written request on a server that is gone is
 * `mcp_server_crashed` (outcome unknown); anything else is the server's own error
 * (`mcp_protocol_error`, its message redacted and cut to 1000 characters).
 */
export function classifyCallFailure(
  error: unknown,
  facts: CallFailureFacts,
): { code: McpErrorCode; message: string } {
  const id = facts.server;
  if (facts.fate === 'oversized') {
    return {
      code: McpErrorCode.invalidResponse,
      message: `MCP server "${id}" answered with a message over the size limit; it was discarded unread (the tool may have run)`,
    };
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.InvalidResult) {
    return {
      code: McpErrorCode.invalidResponse,
      message: `MCP server "${id}" answered with an invalid result (the tool may have run): ${facts.redact(error.message).slice(0, 500)}`,
    };
  }
  if (facts.fate === 'unsent' && (facts.serverGone || isConnectionError(error))) {
    return {
      code: McpErrorCode.serverUnavailable,
      message: `MCP server "${id}" was down or restarting: the call never reached it and did not run; it is safe to try again`,
    };
  }
  if (facts.serverGone) {
    return {
      code: McpErrorCode.serverCrashed,
      message: `MCP server "${id}" stopped during the call; its outcome is unknown, so it is not retried`,
    };
  }
  const message = (error as Error | null)?.message ?? String(error);
  return {
    code: McpErrorCode.protocolError,
    message: `the server answered with an error: ${facts.redact(message).slice(0, 1000)}`,
  };
}
