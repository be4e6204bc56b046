#!/usr/bin/env node
// Entry point of the `snotra` command: loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

// The sidecar token leaves the environment before anything can start a child (tsx starts esbuild).
const launcherToken = process.env.SNOTRA_SIDECAR_TOKEN;
delete process.env.SNOTRA_SIDECAR_TOKEN;
register();
if (launcherToken !== undefined) {
  const { holdLauncherToken } = await import('../surfaces/sidecar/auth.ts');
  holdLauncherToken(launcherToken);
}
const { runCli } = await import('../surfaces/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
// Whatever a failed command left behind (a socket, a child's pipe) must not keep the process alive.
globalThis.setTimeout(() => process.exit(), 3000).unref();
