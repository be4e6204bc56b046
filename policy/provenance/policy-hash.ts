import type { PolicyContext } from '../context.ts';
import { canonicalArgs, sha256Hex } from './args-hash.ts';

/**
 * A hash of the policy-relevant config in force for a call of `tool`: the mode, the agent's
 * tool set, its rules, its roots (with their access and deny globs), whether shell runs
 * sandboxed, whether the call is delegated, and the tool's own security metadata. Grants are
 * left out (they are recorded with their own audit events). Two contexts with equal such parts
 * give the same hash, so an approval shows whether the policy it was given under still holds.
 */
export function policyHash(ctx: PolicyContext, tool: string): string {
  const resolved = ctx.registry.get(tool);
  const parts = {
    v: 1,
    mode: ctx.mode,
    tools: ctx.tools === null ? null : [...ctx.tools].sort(),
    rules: ctx.rules,
    roots: ctx.roots.map((r) => ({ id: r.id, path: r.path, access: r.access, deny: r.deny ?? [] })),
    sandboxed: ctx.sandboxed,
    delegated: ctx.delegation !== null,
    tool: resolved === undefined ? null : resolved.status === 'ok' ? resolved.metadata : resolved.status,
  };
  return sha256Hex(canonicalArgs(parts) ?? JSON.stringify(parts));
}
