#!/usr/bin/env node
// Entry point of the `snotra` command. Installed, it runs the compiled JavaScript in dist/ (the
// CLI's bundle in dist/cli/, scripts/bundle-cli.mjs). In a checkout (tsconfig.build.json beside
// this folder) it runs dist/ only when dist/ is a build of the sources as they are now
// (bin/build-state.mjs), else the TypeScript sources through tsx, so it never runs code older
// than the sources. SNOTRA_FROM_SOURCE=1 forces the sources there.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// A short-lived command (`policy check` of a shell call, say) keeps the bash grammar
// (web-tree-sitter, 1.3 MB of wasm) on V8's baseline compiler: its dynamic tier-up to TurboFan
// started at once, cost ~450 ms of CPU on background threads and held the exit back ~1.5 s, for
// parses only slightly faster afterwards (bench/README.md). Set before any wasm is compiled; the
// long-lived runtime processes keep V8's default.
if (!['start', 'app', 'mcp'].includes(process.argv[2] ?? '')) {
  setFlagsFromString('--wasm-tiering-budget=2000000000');
}

// The sidecar token leaves the environment before anything can start a child (tsx starts esbuild).
const launcherToken = process.env.SNOTRA_SIDECAR_TOKEN;
delete process.env.SNOTRA_SIDECAR_TOKEN;

const root = new URL('..', import.meta.url);
let src = '../dist/';
let ext = '.js';
let main = 'cli/main';
let auth = 'cli/auth';
if (existsSync(new URL('tsconfig.build.json', root))) {
  const { buildIsFresh } = await import('./build-state.mjs');
  if (process.env.SNOTRA_FROM_SOURCE === '1' || !buildIsFresh(root.pathname)) {
    const { register } = await import('tsx/esm/api');
    register();
    src = '../';
    ext = '.ts';
    main = 'surfaces/cli/main';
    auth = 'surfaces/sidecar/auth';
  }
}
if (launcherToken !== undefined) {
  const { holdLauncherToken } = await import(`${src}${auth}${ext}`);
  holdLauncherToken(launcherToken);
}
const { runCli } = await import(`${src}${main}${ext}`);
process.exitCode = await runCli(process.argv.slice(2));
// Whatever a failed command left behind (a socket, a child's pipe) must not keep the process alive.
globalThis.setTimeout(() => process.exit(), 3000).unref();
