/** Hardline rules for Windows: format, diskpart, disk cmdlets, recursive deletes, HKLM, shadow copies. */
import type { Verdict } from '../effects/env.ts';
import type { Field } from '../syntax/field.ts';
import { recursiveOnProtected, windowsWords } from './kit.ts';
import type { CommandRule } from './kit.ts';

/** format of a drive letter. */
export const format: CommandRule = {
  ids: ['hardline.windows-format'],
  applies: (n) => n === 'format',
  check(args) {
    for (const f of args) {
      const v = f.win ?? f.value;
      if (v === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'format with a non-literal argument' };
      if (/^[a-zA-Z]:/.test(v)) return { match: 'hardline.windows-format', detail: `format ${v}` };
    }
    return null;
  },
};

/** Any diskpart. */
export const diskpart: CommandRule = {
  ids: ['hardline.diskpart'],
  applies: (n) => n === 'diskpart',
  check: () => ({ match: 'hardline.diskpart', detail: 'diskpart' }),
};

/** Format-Volume, Clear-Disk, Initialize-Disk, Remove-Partition, Reset-PhysicalDisk. */
export const psDisk: CommandRule = {
  ids: ['hardline.powershell-disk-destroy'],
  applies: (n) =>
    ['format-volume', 'clear-disk', 'initialize-disk', 'remove-partition', 'reset-physicaldisk'].includes(n),
  check: (_args, _env, name) => ({ match: 'hardline.powershell-disk-destroy', detail: name }),
};

/** Splits Windows switches (`/s/q`, `/S`, `-r`) from targets for del, erase, rd, rmdir. */
function windowsDelete(args: readonly Field[]): { recursive: boolean; dynamic: boolean; targets: Field[] } {
  let recursive = false;
  let dynamic = false;
  const targets: Field[] = [];
  for (const f of args) {
    const v = f.value;
    if (v === null) {
      dynamic = true;
      targets.push(f);
      continue;
    }
    if (/^(\/[a-zA-Z?](:[^/]*)?)+$/.test(v)) {
      if (/\/s(?![a-z])/i.test(v)) recursive = true;
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      const opt = v.slice(1).toLowerCase().split(':')[0] ?? '';
      if (opt.length > 0 && 'recurse'.startsWith(opt)) recursive = true;
      continue;
    }
    targets.push(f);
  }
  return { recursive, dynamic, targets };
}

/**
 * del/erase/rd/rmdir with /s are hardline on the same targets as `rm -r` (drive roots, system
 * directories, user profiles, their contents, `%VAR%`s naming them); `rd /s /q build` inside a
 * project is not (it is `rm -rf build`). A target only known at run time is unanalyzable.
 */
export const windowsDel: CommandRule = {
  ids: ['hardline.windows-recursive-delete'],
  applies: (n) => ['del', 'erase', 'rd', 'rmdir'].includes(n),
  check(args, env) {
    const d = windowsDelete(windowsWords(args));
    return recursiveOnProtected(
      d.recursive,
      !d.recursive && d.dynamic,
      d.dynamic,
      d.targets,
      env,
      () => 'hardline.windows-recursive-delete',
      'recursive delete',
      true,
    );
  },
};

const PS_PATH_PARAMS = ['path', 'literalpath', 'pspath', 'lp'];

/** Remove-Item style arguments: recursion switch, dynamic words and target paths (comma lists split). */
function removeItemArgs(args: readonly Field[]): { recursive: boolean; dynamic: boolean; targets: Field[] } {
  let recursive = false;
  let dynamic = false;
  const targets: Field[] = [];
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    const v = f.value;
    if (v === null) {
      dynamic = true;
      targets.push(f);
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      const opt = v.slice(1).toLowerCase().split(':')[0] ?? '';
      if ('recurse'.startsWith(opt)) recursive = true;
      else if (PS_PATH_PARAMS.some((p) => p.startsWith(opt) && opt.length >= 2) || opt === 'p') {
        const next = args[i + 1];
        if (next) targets.push(next);
        i++;
      } else if (
        ['filter', 'include', 'exclude', 'credential', 'stream'].some(
          (p) => p.startsWith(opt) && opt.length >= 2,
        )
      ) {
        i++;
      }
      continue;
    }
    targets.push(f);
  }
  const split: Field[] = [];
  for (const t of targets) {
    if (t.value !== null && t.win !== null && t.value.includes(',')) {
      for (const part of t.win.split(','))
        split.push({ ...t, value: part, win: part, pattern: part, prefix: part });
    } else {
      split.push(t);
    }
  }
  return { recursive, dynamic, targets: split };
}

/** Remove-Item/ri -Recurse on a drive root, system directory or profile. */
export const removeItem: CommandRule = {
  ids: ['hardline.remove-item-recursive'],
  applies: (n) => n === 'remove-item' || n === 'ri',
  check(args, env) {
    const d = removeItemArgs(windowsWords(args));
    if (d.recursive && d.targets.length === 0 && env.stdin.kind === 'pipe') {
      return {
        unknown: 'unanalyzable.dynamic-argument',
        detail: 'Remove-Item -Recurse of paths from the pipeline',
      };
    }
    return recursiveOnProtected(
      d.recursive,
      !d.recursive && d.dynamic,
      d.dynamic,
      d.targets,
      env,
      () => 'hardline.remove-item-recursive',
      'Remove-Item -Recurse',
      true,
    );
  },
};

const HKLM =
  /^(registry::|microsoft\.powershell\.core\\registry::)?(hklm|hkey_local_machine|hkcr|hkey_classes_root)(:|\\|\/|$)/i;

function isHklm(f: Field): boolean {
  const vals = [f.win, f.value].filter((v): v is string => v !== null);
  return vals.some((v) => HKLM.test(v.replace(/^\\\\[^\\]+\\/, '')) || /^(hklm|hkey_local_machine)/i.test(v));
}

/** reg delete HKLM\..., Remove-Item/Remove-ItemProperty/Clear-Item on HKLM: (and HKCR). */
export const registry: CommandRule = {
  ids: ['hardline.registry-delete-hklm'],
  applies: (n) =>
    [
      'reg',
      'remove-item',
      'ri',
      'rm',
      'del',
      'erase',
      'rd',
      'rmdir',
      'remove-itemproperty',
      'rp',
      'clear-item',
      'cli',
      'clear-itemproperty',
      'clp',
    ].includes(n),
  check(args, _env, name) {
    if (name === 'reg') {
      const verb = args[0];
      if (verb === undefined) return null;
      if (verb.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'reg verb is not literal' };
      if (verb.value.toLowerCase() !== 'delete') return null;
      const key = args[1];
      if (key === undefined) return null;
      if (key.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'reg delete of a non-literal key' };
      return isHklm(key) ? { match: 'hardline.registry-delete-hklm', detail: 'reg delete HKLM' } : null;
    }
    const d = removeItemArgs(windowsWords(args));
    return d.targets.some(isHklm)
      ? { match: 'hardline.registry-delete-hklm', detail: `${name} HKLM:` }
      : null;
  },
};

/** vssadmin delete shadows, wmic shadowcopy delete, wbadmin delete catalog/backup. */
export const shadow: CommandRule = {
  ids: ['hardline.shadow-copy-delete'],
  applies: (n) => n === 'vssadmin' || n === 'wmic' || n === 'wbadmin',
  check(args, _env, name) {
    const words = args.map((a) => a.value?.toLowerCase() ?? '');
    const hit: Verdict = { match: 'hardline.shadow-copy-delete', detail: `${name} ${words.join(' ')}` };
    if (
      name === 'vssadmin' &&
      words.includes('delete') &&
      words.some((w) => w === 'shadows' || w === 'shadowstorage')
    )
      return hit;
    if (name === 'wmic' && words.includes('shadowcopy') && words.includes('delete')) return hit;
    if (
      name === 'wbadmin' &&
      words.includes('delete') &&
      words.some((w) => w === 'catalog' || w === 'systemstatebackup' || w === 'backup')
    )
      return hit;
    return null;
  },
};
