import { randomBytes } from 'node:crypto';
import { startSnotra, stopProcess, type StartedProcess } from '../../support/snotra-process.ts';
import type { SurfaceRuntime } from './types.ts';

/** A launcher's per-launch sidecar token (256 bits), as `snotra app` hands it over. */
export function launcherToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * `snotra start --config F` as a launcher runs it: the token in `SNOTRA_SIDECAR_TOKEN`, the
 * ready line read from stdout, SIGTERM to close. `trigger` is the surface's own.
 */
export async function startRuntimeProcess(
  config: string,
  env: Readonly<Record<string, string>>,
  trigger: (rt: SurfaceRuntime) => (agentId: string) => Promise<string>,
): Promise<SurfaceRuntime> {
  const token = launcherToken();
  let logs = '';
  let proc: StartedProcess;
  let port = 0;
  const launch = async () => {
    proc = startSnotra(['start', '--config', config], { ...env, SNOTRA_SIDECAR_TOKEN: token });
    const ready = await proc.ready(60_000);
    port = Number(new URL(String(ready.sidecar)).port);
  };
  const collect = () => {
    logs += proc.stderr();
  };
  await launch();
  const rt: SurfaceRuntime = {
    pid: () => proc.pid,
    sidecar: () => ({ port, token }),
    trigger: (agentId) => trigger(rt)(agentId),
    restart: async () => {
      await stopProcess(proc);
      collect();
      await launch();
    },
    close: async () => {
      await stopProcess(proc);
      collect();
    },
    logs: () => logs + proc.stderr(),
  };
  return rt;
}
