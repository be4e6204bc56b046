import { lstatSync, readdirSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { ScanFs } from '../../runtime/checkpoints/scan-fs.ts';

/**
 * A root's tree as a rewind must give it back, byte for byte: every path (not following
 * symlinks) with its kind, mode, and contents or link target; `skip` names are left out.
 */
export function treeOf(dir: string, skip: readonly string[] = ['node_modules']): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string): void => {
    for (const name of readdirSync(abs).sort()) {
      if (skip.includes(name)) continue;
      const p = join(abs, name);
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[r] = `dir ${mode}`;
        walk(p, r);
      } else out[r] = `file ${mode} ${readFileSync(p).toString('base64')}`;
    }
  };
  out['.'] = `dir ${(lstatSync(dir).mode & 0o7777).toString(8)}`;
  walk(dir, '');
  return out;
}

/**
 * A file system whose timestamps have a coarse granularity the test advances (its tick), for the
 * prefilter's racy-timestamp rule: every distinct timestamp of a file is reported as the tick in
 * which a scan first saw it, and the clock is the current tick. It models one-second (FAT, HFS+,
 * ext3) or coarse-clock timestamps on any kernel, without waiting for a tick to pass; the files,
 * their sizes, inodes and modes are the real ones.
 */
export function coarseTimestamps(): { readonly fs: ScanFs; tick(): void } {
  const BASE = 1_000_000_000_000;
  let tick = 0;
  const seen = new Map<string, number>();
  const at = (key: string): number => {
    let t = seen.get(key);
    if (t === undefined) {
      t = BASE + tick * 1000;
      seen.set(key, t);
    }
    return t;
  };
  return {
    fs: {
      lstat(path) {
        const st = lstatSync(path, { throwIfNoEntry: false });
        if (st === undefined) return undefined;
        const view = Object.assign(Object.create(Object.getPrototypeOf(st) as object) as Stats, st);
        view.mtimeMs = at(`${st.ino} m ${st.mtimeMs}`);
        view.ctimeMs = at(`${st.ino} c ${st.ctimeMs}`);
        return view;
      },
      now: () => BASE + tick * 1000,
    },
    tick: () => {
      tick++;
    },
  };
}
