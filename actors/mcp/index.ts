/** The MCP client (issue 18): stdio servers behind the one policy engine. See README.md. */
export { McpHost } from './host.ts';
export type { McpHostOptions, McpToolView } from './host.ts';
export { McpConnection, McpFailure } from './connection.ts';
export { McpErrorCode } from './codes.ts';
export { DEFAULT_MCP_LIMITS } from './limits.ts';
export type { McpLimits } from './limits.ts';
export { readCatalog } from './catalog.ts';
export { boundResult } from './result.ts';
export { compileArgumentCheck, defuseSchema, toolDigest } from './schema.ts';
export { PipeTransport } from './transport.ts';
export type * from './types.ts';
