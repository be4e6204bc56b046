/**
 * Validation of call arguments against an MCP tool's (untrusted) input schema, before the policy
 * sees the call. The schema is bounded (size, depth) and defused before it is compiled: regular
 * expressions from a server (`pattern`, `patternProperties`) are not run — a hostile pattern
 * could stall the runtime on crafted input (ReDoS) — and remote `$ref`s are never fetched.
 */
import { createHash } from 'node:crypto';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { z } from 'zod';
import type { McpLimits } from './limits.ts';

/** Why a tool's input schema was refused (the tool is then left out of the catalog). */
export class McpSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpSchemaError';
  }
}

function depthOf(value: unknown, depth = 0, limit = 64): number {
  if (depth > limit || typeof value !== 'object' || value === null) return depth;
  let max = depth;
  for (const v of Object.values(value)) max = Math.max(max, depthOf(v, depth + 1, limit));
  return max;
}

/**
 * A copy of `schema` without what must not run: `pattern` (string regexes), `patternProperties`
 * (with the `additionalProperties` beside it, which would otherwise refuse what the patterns
 * allowed), and `$ref`s that are not local (`#…`). Looser, never stricter than the server's own.
 */
export function defuseSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(defuseSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  const src = schema as Record<string, unknown>;
  const hasPatternProps = Object.hasOwn(src, 'patternProperties');
  for (const [key, value] of Object.entries(src)) {
    if (key === 'pattern' && typeof value === 'string') continue;
    if (key === 'patternProperties') continue;
    if (key === 'additionalProperties' && hasPatternProps) continue;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) continue;
    if (key === '$id' || key === '$dynamicRef' || key === '$recursiveRef') continue;
    out[key] = defuseSchema(value);
  }
  return out;
}

/** A stable JSON text: object keys sorted (for digests). */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The digest of a tool's declaration: what a decision was made on. */
export function toolDigest(declaration: {
  readonly name: string;
  readonly inputSchema: unknown;
  readonly annotations: unknown;
}): string {
  return createHash('sha256')
    .update(
      stableJson({ n: declaration.name, i: declaration.inputSchema, a: declaration.annotations ?? null }),
    )
    .digest('hex');
}

/** A compiled argument check: null when valid, otherwise what is wrong (names no value). */
export type ArgumentCheck = (args: Record<string, unknown>) => string | null;

const validator = new AjvJsonSchemaValidator();

/**
 * Compiles `inputSchema` into an argument check. Throws `McpSchemaError` when the schema is too
 * large, too deep, not an object schema, or does not compile.
 */
export function compileArgumentCheck(inputSchema: unknown, limits: McpLimits): ArgumentCheck {
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) {
    throw new McpSchemaError('its inputSchema is not a JSON object');
  }
  const size = Buffer.byteLength(JSON.stringify(inputSchema));
  if (size > limits.maxSchemaBytes) {
    throw new McpSchemaError(`its inputSchema is ${size} bytes, more than ${limits.maxSchemaBytes}`);
  }
  if (depthOf(inputSchema, 0, limits.maxSchemaDepth + 1) > limits.maxSchemaDepth) {
    throw new McpSchemaError(`its inputSchema is nested deeper than ${limits.maxSchemaDepth} levels`);
  }
  const type = (inputSchema as { type?: unknown }).type;
  if (type !== undefined && type !== 'object')
    throw new McpSchemaError('its inputSchema is not of type "object"');
  let check: (input: unknown) => { valid: boolean; errorMessage?: string | undefined };
  try {
    check = validator.getValidator(defuseSchema(inputSchema) as never) as typeof check;
  } catch {
    throw new McpSchemaError('its inputSchema does not compile');
  }
  return (args) => {
    let result: { valid: boolean; errorMessage?: string | undefined };
    try {
      result = check(args);
    } catch {
      return 'the arguments could not be checked against the tool input schema';
    }
    if (result.valid) return null;
    return `does not match the tool input schema: ${(result.errorMessage ?? 'invalid').slice(0, 300)}`;
  };
}

/** The zod schema the policy validates arguments with (step 1: `invalid_arguments`). */
export function argumentSchema(check: ArgumentCheck): z.ZodType<Record<string, unknown>> {
  return z.record(z.string(), z.unknown()).superRefine((args, ctx) => {
    const problem = check(args);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}
