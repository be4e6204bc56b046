/** Stable snake_case codes of MCP failures (tool errors, server status). Documented in README.md. */
export const McpErrorCode = {
  /** The server is not running (starting, crashed and waiting to restart, or stopped). */
  serverUnavailable: 'mcp_server_unavailable',
  /** The server did not start: the program is missing, it exited or did not answer `initialize` and `tools/list` in time. */
  startFailed: 'mcp_start_failed',
  /** `tools/list` after `notifications/tools/list_changed` failed: the server's tools left the catalog. */
  listFailed: 'mcp_list_failed',
  /** The server's process exited or its connection closed while the call was running. */
  serverCrashed: 'mcp_server_crashed',
  /** The tool is not in the server's current listing (renamed, removed, filtered out). */
  toolNotListed: 'mcp_tool_not_listed',
  /** The tool's declaration (input schema, annotations) changed since the call was decided. */
  toolChanged: 'mcp_tool_changed',
  /** The arguments do not match the tool's input schema (checked again at execution). */
  invalidArguments: 'invalid_arguments',
  /** The call ran past `timeoutMs`; the server was sent `notifications/cancelled`. */
  callTimeout: 'mcp_call_timeout',
  /** The call was stopped (its signal fired: the runtime is stopping); the server was sent `notifications/cancelled`. */
  cancelled: 'cancelled',
  /** The tool ran and reported an error (`isError` result); its content is the details. */
  toolError: 'mcp_tool_error',
  /** The server answered with a protocol error (JSON-RPC error response). */
  protocolError: 'mcp_protocol_error',
  /** The server's answer broke a limit (a message too large) or the protocol. */
  invalidResponse: 'mcp_invalid_response',
} as const;
export type McpErrorCode = (typeof McpErrorCode)[keyof typeof McpErrorCode];
