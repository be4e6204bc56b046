/**
 * The sandbox plan: an authority envelope (roots with their access, network or not) together with
 * what the host holds that the sandbox must protect, as plain data. Backends translate a plan
 * into their own terms (`bwrapArgs`, `sandboxExecProfile`) without any I/O.
 */
import type { ConfinedRoot } from '../../actors/tools/process-runner.ts';

/** How a hidden path is replaced: an empty read-only directory, or an empty file. */
export type HiddenKind = 'dir' | 'file';

/** A host path the sandboxed command must not see. */
export interface HiddenPath {
  readonly path: string;
  readonly kind: HiddenKind;
}

/**
 * Everything a backend needs. Paths are absolute and canonical (symlinks resolved) and exist on
 * the host when the plan is made.
 */
export interface SandboxPlan {
  /** The roots the command sees, shallowest first; only `read-write` ones are writable. */
  readonly roots: readonly ConfinedRoot[];
  /** Never-writable paths inside `read-write` roots (git hooks and config, shell rc files…). */
  readonly readOnly: readonly string[];
  /** Sensitive paths (credentials, the runtime's state dir and config): replaced by empty ones. */
  readonly hidden: readonly HiddenPath[];
  /** Whether the command may use the network (the envelope grants `external` risk). */
  readonly network: boolean;
  /** The working directory (inside a root). */
  readonly cwd: string;
  /** The program's own files under a private mount (`/tmp`, `/run`), made visible read-only. */
  readonly programs?: readonly string[];
}

/** Whether `path` is `dir` or lies beneath it (both absolute, `/`-separated, no trailing `/`). */
export function isWithin(path: string, dir: string): boolean {
  if (dir === '/') return path.startsWith('/');
  return path === dir || path.startsWith(`${dir}/`);
}

/** Depth of an absolute path (`/` is 0, `/a/b` is 2): mounts are applied shallowest first. */
export function depthOf(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

/** A confinement that cannot be set up; the message names the path or glob, never file contents. */
export class SandboxError extends Error {
  readonly code = 'sandbox_failed';
  constructor(message: string) {
    super(message);
    this.name = 'SandboxError';
  }
}
