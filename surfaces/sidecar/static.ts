import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm run build:web` writes the web app (committed; test/app/build.test.ts rebuilds it). */
export const APP_DIR = fileURLToPath(new URL('./app/', import.meta.url));

/**
 * The policy every static answer carries: only this origin's scripts, styles and API (no inline
 * script or style, no eval, no plugin, no framing, no form posts, no base URL change).
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The only file types served, by extension (anything else in the folder is not served). */
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** One servable file: its bytes and type, read once at start-up. */
export interface StaticFile {
  readonly body: Buffer;
  readonly type: string;
}

/**
 * The static table: each file of `dir` (recursively) under its exact request path, `/` for
 * `index.html`. Built once from the folder's listing; a request is looked up in this map by its
 * raw path, never joined onto a file system path, so traversal, escapes, a double slash or a
 * missing file all miss (and fall through to the token check). An empty table when the folder
 * does not exist (a runtime without a built app still serves its API).
 */
export function staticTable(dir: string = APP_DIR): ReadonlyMap<string, StaticFile> {
  const table = new Map<string, StaticFile>();
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return table;
  }
  for (const name of names.sort()) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const rel = relative(dir, join(dir, name)).split(sep).join('/');
    if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(rel) || rel.split('/').some((p) => p.startsWith('.')))
      continue;
    // Regular files only: a symlink in the folder is not followed out of it.
    if (!lstatSync(join(dir, name)).isFile()) continue;
    const file = { body: readFileSync(join(dir, name)), type };
    table.set(`/${rel}`, file);
    if (rel === 'index.html') table.set('/', file);
  }
  return table;
}

/** Headers of a static answer: the CSP, nosniff, no framing, no referrer, not cached across launches. */
export function staticHeaders(file: StaticFile): Record<string, string | number> {
  return {
    'Content-Type': file.type,
    'Content-Length': file.body.length,
    'Content-Security-Policy': APP_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  };
}

/** Writes one static file (`HEAD`: its headers only). */
export function sendStatic(res: ServerResponse, file: StaticFile, head: boolean): void {
  res.writeHead(200, staticHeaders(file));
  res.end(head ? undefined : file.body);
}
