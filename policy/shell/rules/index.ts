/**
 * Hardline command rules as data: each entry (rules/*.ts) names the programs it inspects, the
 * stable ids it can report, and a pure check over the command's fields. Structural rules
 * (redirection into a device, fork bombs, writes into devices) are applied by the walker with
 * ids from ids.ts.
 */
import type { CommandEnv } from '../effects/env.ts';
import type { Field } from '../syntax/field.ts';
import type { CommandRule } from './kit.ts';
import { find, mv, recursiveChange, rm, rsync } from './delete.ts';
import { dd, diskutil, mkfs, partition, shred, wipefs } from './disk.ts';
import { git, kill, shutdown } from './system.ts';
import { runtimeControl } from './runtime.ts';
import { diskErase, forceOther, gitHooksPath, killUser, powerBus, volumeDestroy } from './extra.ts';
import { diskpart, format, psDisk, registry, removeItem, shadow, windowsDel } from './windows.ts';

/** Every command rule, in the order they are checked (the first match wins). */
export const COMMAND_RULES: readonly CommandRule[] = [
  rm,
  find,
  rsync,
  mv,
  mkfs,
  dd,
  partition,
  wipefs,
  shred,
  diskutil,
  format,
  diskpart,
  psDisk,
  recursiveChange('hardline.chmod-recursive-protected', ['chmod'], 'chmod -R'),
  recursiveChange('hardline.chown-recursive-protected', ['chown', 'chgrp'], 'chown -R'),
  shutdown,
  kill,
  git,
  windowsDel,
  removeItem,
  registry,
  shadow,
  runtimeControl,
  diskErase,
  volumeDestroy,
  killUser,
  powerBus,
  gitHooksPath,
  forceOther,
];

/** Applies every rule that inspects one of `names` and reports the verdicts to `env`. */
export function applyCommandRules(names: readonly string[], args: readonly Field[], env: CommandEnv): void {
  for (const rule of COMMAND_RULES) {
    const name = names.find((n) => rule.applies(n));
    if (name !== undefined) env.verdict(rule.check(args, env, name));
  }
}
