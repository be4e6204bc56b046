import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

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
