import type { ModelUsage } from '../../machines/run/types.ts';
import type { Decision } from '../../policy/decision.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type { PathGuard } from '../../policy/seams.ts';
import type { Confinement } from './process-runner.ts';

/**
 * A secret named in config: an entry of the secret store (`{ "secret": "openai" }`) or a
 * variable of the runtime's environment (`{ "env": "OPENAI_API_KEY" }`).
 */
export type SecretReference = { readonly secret: string } | { readonly env: string };

/**
 * Resolves a secret inside the tool that needs it (a bare name is a store entry); the value is
 * registered with the redactor at once.
 */
export interface SecretResolver {
  resolve(ref: string | SecretReference): Promise<string>;
}

/** Everything a tool executor may use for one call. */
export interface ToolExecutionContext {
  readonly runId: string;
  readonly callId: string;
  /** Stable across restarts; pass it on to external services that accept one. */
  readonly idempotencyKey: string;
  /** The policy decision that allowed the call, with its resolved targets. */
  readonly decision: Decision;
  /** The roots as they are now (they may have shrunk since the decision). */
  readonly roots: readonly WorkspaceRoot[];
  /** The path guard, for the execution-time re-check of every path before it is touched. */
  readonly paths: PathGuard;
  readonly signal: AbortSignal;
  readonly secrets: SecretResolver;
  /**
   * What the run's OS sandbox mounts for child processes (its own envelope: a sub-agent's roots,
   * not its parent's). Absent: `roots` with their access, and no network.
   */
  readonly confinement?: Confinement;
  /** For tools that run sub-agents: what the child spent, carved out of this run's budget. */
  readonly reportUsage?: (usage: {
    readonly modelCalls: number;
    readonly toolCalls: number;
    /** The child's tokens (and cost), when its model reported them. */
    readonly tokens?: ModelUsage;
  }) => void;
}

/**
 * A tool executor: acts only on what was decided. Arguments were validated by the policy's
 * schema for the tool. The result becomes the model-visible observation after it is
 * size-capped and redacted in one place (never by the executor).
 */
export interface ToolExecutor {
  execute(args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<unknown>;
}

/** Options of a `ToolError`: the standard `cause`, plus structured details for the model. */
export interface ToolErrorOptions extends ErrorOptions {
  /**
   * JSON-compatible data the model may see with the error (e.g. a failed command's output).
   * It goes through the same size cap and redaction as any result.
   */
  readonly details?: unknown;
}

/** A failure a tool reports to the model (message must not contain secrets; it is redacted anyway). */
export class ToolError extends Error {
  /** Structured data shown with the error, when the tool gave any. */
  readonly details?: unknown;

  constructor(
    readonly code: string,
    message: string,
    options?: ToolErrorOptions,
  ) {
    super(message, options);
    this.name = 'ToolError';
    if (options?.details !== undefined) this.details = options.details;
  }
}
