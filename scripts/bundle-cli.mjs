// Bundles the CLI into dist/cli/ with esbuild (code splitting: one chunk per command, loaded
// lazily as before), run by scripts/build.mjs after tsc. The bin runs dist/cli/main.js: a CLI call
// then reads a few large files instead of ~200 small modules (Node 20 has no compile cache for
// ES modules), and zod comes without its 64 locale files (bench/README.md, "Session 5").
//
// What stays as it was in dist/:
// - `import.meta.url`: each of our modules sees the URL of its own compiled file in dist/ (the
//   bundler writes `new URL('../<path>.js', import.meta.url).href`, from dist/cli/ to the file),
//   so the files found next to a module (the sidecar's web app, the search worker, the package
//   root) and `createRequire` resolve from the same place in a checkout and an installed package.
// - Packages that find files next to themselves, load native code or run workers stay external
//   (imported from node_modules at run time): better-sqlite3, web-tree-sitter and the grammar,
//   piscina, pino and its transports, ws, the keyring, the MCP SDK (with its own zod), viz.
// - zod is bundled (tree-shaken, English messages only). The MCP SDK keeps its own copy: the two
//   meet only through Standard Schema (`~standard`) and zod's registry and config, which zod keeps
//   on globalThis for this case (test/package/bundle.test.ts runs `snotra mcp` from the bundle).
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

/** Packages imported from node_modules at run time, never bundled (see above). */
const EXTERNAL = new Set([
  'better-sqlite3',
  'web-tree-sitter',
  'tree-sitter-bash',
  'piscina',
  'pino',
  'pino-pretty',
  'thread-stream',
  'ws',
  '@napi-rs/keyring',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/server',
  '@viz-js/viz',
  'playwright-core',
]);

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

const ZOD_IMPORT = "import { z } from 'zod';";
/** A value import of zod in another form would keep all of zod (and its locales): refused. */
const OTHER_ZOD_IMPORT = /^import\s+(?!type\b)[^;]*from\s+['"]zod(\/[^'"]*)?['"]/m;

/**
 * Node modules our sources import that the bundle loads on first call, not at start-up.
 * child_process (with net and dgram under it) costs ~3-5 ms to load, and `snotra policy check`
 * loads the sandbox probe that imports it but runs it only for a shell call in `allow` mode. The
 * bundle's module for each exports a function per function of Node's module that calls it,
 * loaded by `require` when first called: the same function with the same arguments. Only
 * functions whose names start in lower case (a class would need `new` and `instanceof`): an
 * import of anything else fails the build ("No matching export"). Not crypto: every policy check
 * calls it (the state dir's hash).
 */
const LAZY_BUILTINS = new Set(['node:child_process']);
const LAZY_NAMESPACE = 'snotra-lazy-builtin';

async function lazyBuiltin(specifier) {
  const mod = await import(specifier);
  const names = Object.keys(mod).filter((k) => /^[a-z]/.test(k) && typeof mod[k] === 'function');
  return [
    'let loaded = null;',
    `const load = () => (loaded ??= require(${JSON.stringify(specifier)}));`,
    ...names.map((n) => `export function ${n}(...args) {\n  return load().${n}(...args);\n}`),
  ].join('\n');
}

/**
 * Surfaces import the runtime only through runtime/index.ts (lint checks it). esbuild's code
 * splitting cannot drop what a command does not use from such an index: a chunk that imports it
 * imports every module it re-exports, so `snotra policy check` would load the whole runtime (and
 * the store). The bundle therefore reads the index's `export … from` lines and rewrites a
 * surface's import of it into imports of the modules that hold the names it imports: each
 * command loads what it did before. A name the index does not export fails the build.
 */
async function runtimeIndex(root) {
  const src = await readFile(join(root, 'runtime', 'index.ts'), 'utf8');
  const names = new Map();
  for (const m of src.matchAll(/^export\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)';/gm)) {
    for (const raw of (m[2] ?? '').split(',')) {
      const name = raw.trim().replace(/^type\s+/, '');
      if (name !== '')
        names.set(name, {
          from: join(root, 'runtime', m[3] ?? ''),
          type: m[1] !== undefined || /^\s*type\s/.test(raw),
        });
    }
  }
  return names;
}

const INDEX_IMPORT = /^import\s+(type\s+)?\{([^}]*)\}\s+from\s+'((?:\.\.\/)+)runtime\/index\.ts';/gm;

function withDeepRuntimeImports(src, file, root, index) {
  return src.replaceAll(INDEX_IMPORT, (_all, typeOnly, list) => {
    if (typeOnly !== undefined) return '';
    const byModule = new Map();
    for (const raw of list.split(',')) {
      const name = raw.trim();
      if (name === '' || name.startsWith('type ')) continue;
      const entry = index.get(name);
      if (entry === undefined)
        throw new Error(`${relative(root, file)}: runtime/index.ts exports no ${name}`);
      if (entry.type) continue;
      let spec = relative(dirname(file), entry.from);
      if (!spec.startsWith('.')) spec = `./${spec}`;
      byModule.set(spec, [...(byModule.get(spec) ?? []), name]);
    }
    return [...byModule].map(([spec, ns]) => `import { ${ns.join(', ')} } from '${spec}';`).join('\n');
  });
}

/** Our sources as the bundle needs them: file-relative URLs of their dist/ file, zod as a namespace. */
function sourcesPlugin(root, outdir) {
  const ours = (file) => {
    const rel = relative(root, file);
    return !rel.startsWith('..') && !rel.includes('node_modules');
  };
  return {
    name: 'snotra-sources',
    async setup(b) {
      const index = await runtimeIndex(root);
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (LAZY_BUILTINS.has(args.path) && args.namespace === 'file' && ours(args.importer))
          return { path: args.path, namespace: LAZY_NAMESPACE };
        if (args.path.startsWith('node:') || EXTERNAL.has(packageOf(args.path))) return { external: true };
        return undefined;
      });
      b.onLoad({ filter: /.*/, namespace: LAZY_NAMESPACE }, async (args) => ({
        contents: await lazyBuiltin(args.path),
        loader: 'js',
      }));
      b.onLoad({ filter: /\.(ts|mts)$/ }, async (args) => {
        if (!ours(args.path)) return undefined;
        const rel = relative(root, args.path);
        let src = await readFile(args.path, 'utf8');
        // `import * as z`: esbuild keeps only the members used; the `z` object of zod's index is
        // every export, locales included.
        const other = OTHER_ZOD_IMPORT.exec(src.replaceAll(ZOD_IMPORT, ''));
        if (other !== null) throw new Error(`${rel}: import zod as \`${ZOD_IMPORT}\`, not \`${other[0]}\``);
        src = src.replaceAll(ZOD_IMPORT, "import * as z from 'zod';");
        if (rel.startsWith('surfaces/')) src = withDeepRuntimeImports(src, args.path, root, index);
        if (src.includes('import.meta.url')) {
          const compiled = relative(
            outdir,
            join(root, 'dist', rel.replace(/\.ts$/, '.js').replace(/\.mts$/, '.mjs')),
          );
          src = src.replaceAll(
            'import.meta.url',
            `new URL(${JSON.stringify(compiled)}, import.meta.url).href`,
          );
        }
        return { contents: src, loader: 'ts' };
      });
    },
  };
}

/** Bundles the CLI (entries: the CLI's main and the sidecar token holder the bin calls) into dist/cli/. */
export async function bundleCli(root) {
  const outdir = join(root, 'dist', 'cli');
  await build({
    absWorkingDir: root,
    entryPoints: { main: 'surfaces/cli/main.ts', auth: 'surfaces/sidecar/auth.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minifySyntax: true,
    // Bundled CommonJS packages (commander, picomatch, the NATS client) call `require` for Node's
    // own modules.
    banner: {
      js: "import { createRequire as __snotraRequire } from 'node:module';\nconst require = __snotraRequire(import.meta.url);",
    },
    plugins: [sourcesPlugin(root, outdir)],
    logLevel: 'warning',
  });
}
