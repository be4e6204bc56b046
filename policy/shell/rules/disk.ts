/** Hardline rules for file system and disk destruction (mkfs, dd, partition tools, wipefs, shred, diskutil). */
import type { CommandEnv, Verdict } from '../effects/env.ts';
import type { Field } from '../syntax/field.ts';
import type { HardlineRuleId } from './ids.ts';
import { parseOptions } from '../programs/options.ts';
import { deviceKind } from '../effects/paths.ts';
import type { CommandRule } from './kit.ts';

function onlyInfo(args: readonly Field[]): boolean {
  return args.length === 1 && ['--help', '-h', '--version', '-V'].includes(args[0]?.value ?? '');
}

/** Creating a file system: mkfs*, mke2fs, mkswap, newfs*. */
export const mkfs: CommandRule = {
  ids: ['hardline.mkfs'],
  applies: (n) =>
    /^mkfs([._-].*)?$/.test(n) ||
    /^newfs(_.*)?$/.test(n) ||
    ['mke2fs', 'mkswap', 'mkdosfs', 'mkntfs', 'mkexfatfs'].includes(n),
  check: (args, _env, name) => (onlyInfo(args) ? null : { match: 'hardline.mkfs', detail: name }),
};

function deviceVerdict(fields: readonly Field[], env: CommandEnv, id: HardlineRuleId, what: string): Verdict {
  let unknown = false;
  for (const f of fields) {
    const r = env.resolve(f);
    if (
      r.refs.some(
        (ref) => deviceKind(ref.text, ref.glob) === 'device' || deviceKind(ref.win ?? '') === 'device',
      )
    ) {
      return { match: id, detail: `${what} a device` };
    }
    unknown ||= r.unknown;
  }
  return unknown
    ? { unknown: 'unanalyzable.dynamic-argument', detail: `${what} a path only known at run time` }
    : null;
}

/** The `of=` operand of dd as a path field. */
function ddTarget(f: Field & { value: string }): Field {
  return {
    ...f,
    value: f.value.slice(3),
    win: f.win?.slice(3) ?? null,
    pattern: f.pattern?.slice(3) ?? null,
    prefix: f.prefix.slice(3),
    tilde: f.value.startsWith('of=~'),
  };
}

/** dd (and dcfldd) with of= naming a device. */
export const dd: CommandRule = {
  ids: ['hardline.dd-device'],
  applies: (n) => n === 'dd' || n === 'dcfldd',
  check(args, env) {
    const targets: Field[] = [];
    let dynamic = false;
    for (const f of args) {
      if (f.value === null) {
        dynamic ||= f.prefix.startsWith('of=') || 'of='.startsWith(f.prefix);
      } else if (f.value.startsWith('of=')) {
        targets.push(ddTarget(f as Field & { value: string }));
      }
    }
    const v = deviceVerdict(targets, env, 'hardline.dd-device', 'dd writes to');
    if (v !== null && 'match' in v) return v;
    if (dynamic)
      return { unknown: 'unanalyzable.dynamic-argument', detail: 'dd with a non-literal operand (of=?)' };
    return v;
  },
};

/** sfdisk's forms that only print (`-d`, `-l`, `-s`, `-J`, `--verify`, ...). */
const SFDISK_READS = new Set([
  '-d',
  '--dump',
  '-J',
  '--json',
  '-s',
  '--show-size',
  '-V',
  '--verify',
  '-g',
  '--show-geometry',
  '--list-free',
  '-F',
  '--list-types',
  '-T',
]);

/** `parted [-s|-m] DEVICE print|unit U print|help`: parted's read-only script commands. */
function partedOnlyPrints(args: readonly Field[]): boolean {
  const words = args.map((a) => a.value);
  if (words.some((w) => w === null)) return false;
  const rest = (words as string[]).filter((w) => !/^-(s|m|-script|-machine)$/.test(w));
  const [device, ...commands] = rest;
  if (device === undefined || commands.length === 0) return false;
  let i = 0;
  while (i < commands.length) {
    const c = commands[i]?.toLowerCase();
    if (c === 'print' || c === 'p' || c === 'help') i++;
    else if (c === 'unit' && i + 1 < commands.length) i += 2;
    else return false;
  }
  return true;
}

/** Partition table editors, except their list-only forms. */
export const partition: CommandRule = {
  ids: ['hardline.partition-table'],
  applies: (n) => ['fdisk', 'sfdisk', 'cfdisk', 'gdisk', 'sgdisk', 'cgdisk', 'parted', 'gparted'].includes(n),
  check(args, _env, name) {
    const first = args[0]?.value;
    if (
      onlyInfo(args) ||
      first === '-l' ||
      first === '--list' ||
      (name === 'sfdisk' && SFDISK_READS.has(first ?? '')) ||
      (name === 'parted' && partedOnlyPrints(args))
    ) {
      return null;
    }
    return { match: 'hardline.partition-table', detail: name };
  },
};

/** wipefs, blkdiscard, nvme format/sanitize. */
export const wipefs: CommandRule = {
  ids: ['hardline.wipefs'],
  applies: (n) => n === 'wipefs' || n === 'blkdiscard' || n === 'nvme',
  check(args, _env, name) {
    if (onlyInfo(args)) return null;
    if (name === 'nvme') {
      const verb = args[0];
      if (verb === undefined) return null;
      if (verb.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'nvme verb is not literal' };
      return ['format', 'sanitize'].includes(verb.value)
        ? { match: 'hardline.wipefs', detail: `nvme ${verb.value}` }
        : null;
    }
    return { match: 'hardline.wipefs', detail: name };
  },
};

/** shred of a device. */
export const shred: CommandRule = {
  ids: ['hardline.shred-device'],
  applies: (n) => n === 'shred',
  check(args, env) {
    const p = parseOptions(args, {
      shortValue: 'ns',
      longValue: ['iterations', 'size', 'random-source', 'remove'],
    });
    return deviceVerdict(p.operands, env, 'hardline.shred-device', 'shred of');
  },
};

const DISKUTIL_VERBS = new Set([
  'zerodisk',
  'randomdisk',
  'secureerase',
  'reformat',
  'partitiondisk',
  'deletecontainer',
  'deletevolume',
]);

/** diskutil erase verbs, zeroDisk, randomDisk, secureErase, partitionDisk, apfs deleteContainer. */
export const diskutil: CommandRule = {
  ids: ['hardline.diskutil-erase'],
  applies: (n) => n === 'diskutil',
  check(args) {
    for (const f of args.slice(0, 2)) {
      if (f.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'diskutil verb is not literal' };
      const v = f.value.toLowerCase();
      if (v.startsWith('erase') || DISKUTIL_VERBS.has(v))
        return { match: 'hardline.diskutil-erase', detail: `diskutil ${f.value}` };
      if (v !== 'apfs' && v !== 'cs' && v !== 'corestorage') break;
    }
    return null;
  },
};
