/**
 * `request_directory_access {path, access}`: describe the root a human approved, for the runtime
 * to apply. The tool never changes roots itself.
 */
import { executionGuard, refusalError } from './paths.ts';
import type { ToolExecutionContext, ToolExecutor } from './types.ts';

/** The request handed back to the runtime (applied only because a human approved the call). */
export interface DirectoryAccessRequest {
  readonly kind: 'directory_access_request';
  /** Canonical absolute path of the requested directory. */
  readonly path: string;
  readonly access: 'read' | 'read-write';
  /** Always false: applying the grant is the runtime's job, audited there. */
  readonly applied: false;
}

/**
 * Creates the `request_directory_access` executor. Guarantees: the path is canonicalized again
 * and checked against sensitive (and, for `read-write`, never-writable) paths at execution; the
 * result only describes the request — roots are never added here.
 */
export function createDirectoryAccessExecutor(): ToolExecutor {
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<DirectoryAccessRequest> {
      const guard = executionGuard(ctx);
      const access = args.access === 'read-write' ? 'read-write' : 'read';
      const input = String(args.path);
      const denial = guard.checkSensitive(input, access === 'read-write' ? 'write' : 'read', ctx.roots);
      if (denial !== null) throw refusalError(denial);
      const canonical = guard.canonicalize(input, ctx.roots);
      if (!canonical.ok)
        throw refusalError({
          reason: 'invalid_path',
          rule: { id: canonical.ruleId },
          message: canonical.message,
        });
      return { kind: 'directory_access_request', path: canonical.canonical.path, access, applied: false };
    },
  };
}
