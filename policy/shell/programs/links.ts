/**
 * `ln` and `link`: what a link points to is read (a link to a sensitive path is that path), the
 * link itself is written, and later uses of the link path in the same command are not static
 * (effects/findings.ts). A relative symlink target is relative to the link's directory.
 */
import type { CommandEnv } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';
import { flagValue, hasFlag, parseOptions } from './options.ts';
import type { OptionSpec } from './options.ts';

const LN: OptionSpec = {
  shortValue: 'tS',
  longValue: ['target-directory', 'suffix'],
  longFlags: ['symbolic', 'force', 'no-target-directory', 'relative', 'logical', 'physical', 'verbose'],
};

/** ln [-s] SOURCE... DEST | ln -t DIR SOURCE... | ln SOURCE (a link named like it, here). */
export function ln(args: readonly Field[], env: CommandEnv): void {
  const p = parseOptions(args, LN);
  const target = flagValue(p, 't', 'target-directory');
  const intoDir = target !== undefined;
  const dest = intoDir ? target : p.operands.length > 1 ? p.operands.at(-1) : undefined;
  const sources = intoDir || p.operands.length < 2 ? p.operands : p.operands.slice(0, -1);
  const symbolic = hasFlag(p, 's', 'symbolic');
  // The link's directory (and the destination itself when it names a directory); '' is the cwd.
  const dirs = dest?.value == null ? [''] : [dest.value.replace(/\/?[^/]*$/, '')];
  if (dest?.value != null && (intoDir || sources.length > 1 || dest.value.endsWith('/')))
    dirs.push(dest.value);
  for (const src of sources) {
    const relative = src.value !== null && !src.value.startsWith('/') && !src.tilde;
    if (!symbolic || !relative || dest === undefined || dest === null) {
      env.read(src);
      continue;
    }
    for (const base of dirs) {
      env.read(base === '' ? src : { ...literalField(`${base}/${src.value ?? ''}`), tilde: dest.tilde });
    }
  }
  if (dest === undefined || dest === null) {
    for (const src of sources) if (src.value !== null) env.link(literalField(src.value.replace(/^.*\//, '')));
    return;
  }
  env.write(dest, false);
  env.link(dest);
}

/** link SOURCE DEST: a hard link. */
export function link(args: readonly Field[], env: CommandEnv): void {
  const [source, dest] = parseOptions(args, {}).operands;
  if (source) env.read(source);
  if (dest) {
    env.write(dest, false);
    env.link(dest);
  }
}
