import { existsSync, mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundlePath, CHILD_SCRIPTS } from './child-scripts.ts';

/** `import.meta` of a bundled test module, as it was in its source file. */
function withOwnImportMeta(source: string, file: string): string {
  return source
    .replaceAll('import.meta.dirname', JSON.stringify(dirname(file)))
    .replaceAll('import.meta.filename', JSON.stringify(file))
    .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(file).href));
}

/**
 * Test modules are bundled; a product module is imported from its compiled file in dist/ (built
 * from the same sources by the same globalSetup), packages from node_modules.
 */
function childPlugin(root: string): Plugin {
  const testDir = join(root, 'test');
  return {
    name: 'snotra-test-children',
    setup(b) {
      b.onResolve({ filter: /^\./ }, (args) => {
        const file = resolve(args.resolveDir, args.path);
        const rel = relative(root, file);
        if (
          rel.startsWith('..') ||
          isAbsolute(rel) ||
          rel.startsWith('test/') ||
          rel.includes('node_modules')
        )
          return undefined;
        const compiled = join(root, 'dist', rel.replace(/\.ts$/, '.js'));
        if (!existsSync(compiled)) throw new Error(`${rel} has no compiled file in dist/ (${compiled})`);
        return { path: pathToFileURL(compiled).href, external: true };
      });
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!args.path.startsWith(`${testDir}/`)) return undefined;
        return { contents: withOwnImportMeta(readFileSync(args.path, 'utf8'), args.path), loader: 'ts' };
      });
    },
  };
}

/**
 * Bundles every child script of CHILD_SCRIPTS into a fresh folder under node_modules/.cache (so
 * packages resolve from the project's node_modules) and returns it. Each run gets its own folder:
 * two runs in one checkout never read each other's half-written files.
 */
export async function buildChildren(root: string): Promise<string> {
  const base = join(root, 'node_modules', '.cache', 'snotra-test-children');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, `${process.pid}-`));
  try {
    await Promise.all(
      CHILD_SCRIPTS.map((script) =>
        build({
          entryPoints: [join(root, script)],
          outfile: bundlePath(dir, script),
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          packages: 'external',
          logLevel: 'silent',
          plugins: [childPlugin(root)],
        }),
      ),
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}
