#!/usr/bin/env node
// Entry point of the `snotra` command. Installed, it runs the compiled JavaScript in dist/ (the
// CLI's bundle in dist/cli/, scripts/bundle-cli.mjs). In a checkout (tsconfig.build.json beside
// this folder) it runs dist/ only when dist/ is a build of the sources as they are now
// (bin/build-state.mjs), else the TypeScript sources through tsx, so it never runs code older
// than the sources. SNOTRA_FROM_SOURCE=1 forces the sources there.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

// A short-lived command (`policy check` of a shell call, say) keeps the bash grammar
// (web-tree-sitter, 1.3 MB of wasm) on V8's baseline compiler: its dynamic tier-up to TurboFan
// started at once, cost ~450 ms of CPU on background threads and held the exit back ~1.5 s, for
// parses only slightly faster afterwards (bench/README.md). Set before any wasm is compiled; the
// long-lived runtime processes keep V8's default.
if (!['start', 'app', 'mcp'].includes(process.argv[2] ?? '')) {
  setFlagsFromString('--wasm-tiering-budget=2000000000');
}

/** Whether the command line is `policy check` of one `shell` call (`--tool shell` or `--tool=shell`). */
function checksShell(argv) {
  if (argv[0] !== 'policy' || argv[1] !== 'check') return false;
  return argv.some((a, i) => a === '--tool=shell' || (a === '--tool' && argv[i + 1] === 'shell'));
}

/**
 * `policy check` of a shell call compiles the parser's two wasm modules (web-tree-sitter's
 * runtime and the bash grammar) now, on V8's background threads, while the main thread loads the
 * CLI and the config: compiled eagerly (not function by function on first call, V8's default,
 * which put ~10 ms of compiling on the main thread inside the first parse). V8 keeps a compiled
 * module for the same bytes (its native module cache), so when the parser compiles them it gets
 * this compilation back. The same bytes give the same code: decisions do not change. Any failure
 * here is ignored; the parser's own load then reports it.
 */
function compileGrammarEarly() {
  setFlagsFromString('--no-wasm-lazy-compilation');
  const require = createRequire(import.meta.url);
  let files;
  try {
    files = [
      new URL(import.meta.resolve('web-tree-sitter/tree-sitter.wasm')),
      require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'),
    ];
  } catch {
    return null;
  }
  return Promise.all(
    files.map((f) => readFile(f).then((bytes) => globalThis.WebAssembly.compile(bytes))),
  ).catch(() => null);
}
// Referenced again after the command has run: V8 keeps a cached module only while it is in use.
const earlyGrammar = checksShell(process.argv.slice(2)) ? compileGrammarEarly() : null;

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
void earlyGrammar;
// Whatever a failed command left behind (a socket, a child's pipe) must not keep the process alive.
globalThis.setTimeout(() => process.exit(), 3000).unref();
