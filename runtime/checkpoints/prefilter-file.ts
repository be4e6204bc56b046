/**
 * The prefilter kept between processes: a runtime that restarts, and a `snotra rewind` from the
 * CLI, start from what the last scans saw instead of reading and hashing every file of a root
 * again. It is a cache of facts ("a file with this exact stat had these contents"): an entry is
 * used only when a file's size, mtime, ctime, inode and mode all match and its contents are in
 * the store, so a stale entry costs a read, never a wrong checkpoint; a racily clean file is
 * never in it (`scan-fs.ts`). A file that is missing,
 * damaged or from another version is ignored. It lies in the store's folder (0700, in the state
 * dir the sandbox hides), written to a temporary file and renamed into place.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { PREFILTER_FORMAT_VERSION, PrefilterFile } from './format.ts';
import type { StatKey } from './scan.ts';

/** The prefilter's file in the store's folder. */
export const PREFILTER_FILE = 'prefilter.json';

function read(dir: string): PrefilterFile | null {
  let text: string;
  try {
    text = readFileSync(join(dir, PREFILTER_FILE), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = PrefilterFile.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function prefixOf(root: string): string {
  return root.endsWith(sep) ? root : `${root}${sep}`;
}

/** The files remembered for `root` (canonical) in the store folder `dir`, by absolute path; null for none. */
export function loadPrefilter(dir: string, root: string): Map<string, StatKey> | null {
  const found = read(dir)?.roots.find((r) => r.path === root);
  if (found === undefined) return null;
  const prefix = prefixOf(root);
  const files = new Map<string, StatKey>();
  for (const [rel, size, mtimeMs, ctimeMs, ino, mode, hash] of found.files)
    files.set(prefix + rel, { size, mtimeMs, ctimeMs, ino, mode, hash });
  return files;
}

/**
 * Writes what is remembered of `roots` to the store folder `dir`, keeping the other roots the
 * file holds. Throws only what the file system throws (the caller treats it as a cache miss).
 */
export function savePrefilter(dir: string, roots: ReadonlyMap<string, ReadonlyMap<string, StatKey>>): void {
  const kept = (read(dir)?.roots ?? []).filter((r) => !roots.has(r.path));
  const written: PrefilterFile['roots'] = [...kept];
  for (const [root, files] of roots) {
    const prefix = prefixOf(root);
    const rows: PrefilterFile['roots'][number]['files'] = [];
    for (const [abs, k] of files)
      if (abs.startsWith(prefix))
        rows.push([abs.slice(prefix.length), k.size, k.mtimeMs, k.ctimeMs, k.ino, k.mode, k.hash]);
    written.push({ path: root, files: rows });
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
  writeFileSync(tmp, JSON.stringify({ v: PREFILTER_FORMAT_VERSION, roots: written }), {
    mode: 0o600,
    flag: 'wx',
  });
  renameSync(tmp, join(dir, PREFILTER_FILE));
}
