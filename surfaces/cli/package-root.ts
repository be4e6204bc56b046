import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | null = null;

/**
 * The package's folder (the one with its package.json): two levels above this file in the
 * sources, three in the compiled build (`dist/surfaces/cli/`). Files shipped beside the code
 * (package.json, the schema) are found from here, whichever of the two runs.
 */
export function packageRoot(): string {
  if (root !== null) return root;
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const dir = join(here, up);
    if (existsSync(join(dir, 'package.json'))) return (root = dir);
  }
  throw new Error(`cannot find the snotra-runtime package.json above ${here}`);
}

/** A file of the package by its path from the package's folder (`schema/snotra.config.schema.json`). */
export function packageFile(path: string): string {
  return join(packageRoot(), path);
}

/** The version in package.json (what `snotra --version` prints). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as {
    version?: unknown;
  };
  return String(pkg.version);
}
