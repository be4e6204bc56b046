import { createBuiltinExecutors, FileWorkerPool } from '../actors/tools/index.ts';
import type { ToolExecutor } from '../actors/tools/types.ts';
import { ProcessSupervisor } from './processes/index.ts';
import type { Sandbox } from './sandbox/index.ts';

/** The built-in tool executors with the resources they own (worker pool, process supervisor). */
export interface DefaultTools {
  readonly executors: Readonly<Record<string, ToolExecutor>>;
  /** Terminates every child process tree and the worker pool. */
  close(): Promise<void>;
}

/**
 * The built-in executors of DESIGN.md §12, wired to a file worker pool and the process
 * supervisor (sanitized environments, process groups, lifeline, and the OS sandbox when there is one). `send_message` has no platform
 * until one is configured and fails with `platform_unavailable`.
 */
export function createDefaultTools(
  options: {
    readonly allowPrivateHosts?: readonly string[];
    /** The OS sandbox every shell and git child runs in (null: none on this host). */
    readonly sandbox?: Sandbox | null;
  } = {},
): DefaultTools {
  const pool = new FileWorkerPool();
  const supervisor = new ProcessSupervisor({ sandbox: options.sandbox ?? null });
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
