import { createBuiltinExecutors, FileWorkerPool } from '../actors/tools/index.ts';
import type { ToolExecutor } from '../actors/tools/types.ts';
import { ProcessSupervisor } from './processes/index.ts';

/** The built-in tool executors with the resources they own (worker pool, process supervisor). */
export interface DefaultTools {
  readonly executors: Readonly<Record<string, ToolExecutor>>;
  /** Terminates every child process tree and the worker pool. */
  close(): Promise<void>;
}

/**
 * The built-in executors of DESIGN.md §12, wired to a file worker pool and the process
 * supervisor (sanitized environments, process groups, lifeline). `send_message` has no platform
 * until one is configured and fails with `platform_unavailable`.
 */
export function createDefaultTools(
  options: { readonly allowPrivateHosts?: readonly string[] } = {},
): DefaultTools {
  const pool = new FileWorkerPool();
  const supervisor = new ProcessSupervisor();
  const executors = createBuiltinExecutors({
    pool,
    runner: supervisor,
    http: { allowPrivateHosts: options.allowPrivateHosts ?? [] },
  });
  return {
    executors,
    close: async () => {
      await supervisor.shutdown();
      await pool.close();
    },
  };
}
