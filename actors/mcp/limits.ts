/** Bounds on what an (untrusted) MCP server can make the runtime hold or do. */
export interface McpLimits {
  /** Longest JSON-RPC line read from a server (bytes). */
  readonly maxLineBytes: number;
  /** Most `tools/list` pages read per listing. */
  readonly maxPages: number;
  /** Most tools kept per server (the rest are dropped and reported). */
  readonly maxTools: number;
  /** Largest input schema accepted per tool (bytes of JSON); a larger one drops the tool. */
  readonly maxSchemaBytes: number;
  /** Deepest nesting of an input schema; a deeper one drops the tool. */
  readonly maxSchemaDepth: number;
  /** Largest result kept (bytes of JSON, text and structured content together). */
  readonly maxResultBytes: number;
  /** Most content blocks kept of one result. */
  readonly maxContentBlocks: number;
  /** Longest wait for a server to start and answer `initialize` and its first listing (ms). */
  readonly startTimeoutMs: number;
  /** Default per-call limit when the server's `timeoutMs` is not set (ms). */
  readonly callTimeoutMs: number;
  /** Bytes of stderr kept per server (its tail, for crash reports). */
  readonly stderrTailBytes: number;
  /**
   * Calls one server has in flight at once; more wait in the runtime, unsent, so a crash tells
   * a call that never reached the server (`mcp_server_unavailable`) from one that did.
   */
  readonly maxConcurrentCalls: number;
  /** Restart backoff: first delay, and the cap (ms). */
  readonly restartBaseMs: number;
  readonly restartMaxMs: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  maxLineBytes: 8 * 1024 * 1024,
  maxPages: 32,
  maxTools: 512,
  maxSchemaBytes: 64 * 1024,
  maxSchemaDepth: 24,
  maxResultBytes: 256 * 1024,
  maxContentBlocks: 64,
  startTimeoutMs: 30_000,
  callTimeoutMs: 60_000,
  stderrTailBytes: 4096,
  maxConcurrentCalls: 1,
  restartBaseMs: 500,
  restartMaxMs: 30_000,
};
