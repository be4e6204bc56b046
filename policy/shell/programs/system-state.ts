/**
 * System changes that name no path (issue 35): `crontab -r`, `userdel -r bob`, `passwd`,
 * `systemctl disable x`, `iptables -F`, ... Each writes system state outside every root (the
 * user and password databases, the cron spool, unit links, firewall tables, kernel settings), so
 * each is recorded as a write of the file or folder that holds that state: outside the roots it
 * is denied (a password database is a sensitive path). Their read-only forms (`crontab -l`,
 * `systemctl status`, `iptables -L`) write nothing. Their arguments are never probed as paths.
 */
import type { CommandEnv } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';
import type { Collector } from './files/collector.ts';

/** Records a write of the system state at `path` (a literal, outside every root). */
function changes(env: CommandEnv, path: string): void {
  env.write(literalField(path), false);
}

/** The first operand (a verb), lower case; '' when none, null when not literal. */
function verb(args: readonly Field[], valueOptions = ''): string | null {
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value;
    if (v === null || v === undefined) return null;
    if (v.startsWith('-')) {
      if (v.length === 2 && valueOptions.includes(v[1] ?? '')) i++;
      continue;
    }
    return v.toLowerCase();
  }
  return '';
}

/** True when only help or version was asked for. */
function onlyHelp(args: readonly Field[]): boolean {
  return args.some((a) => /^(-h|--help|-V|--version|-\?)$/.test(a.value ?? ''));
}

/** A program that always changes `path` (useradd, userdel, chpasswd, ...), unless asked for help. */
function always(path: string): Collector {
  return (args, env) => {
    if (!onlyHelp(args)) changes(env, path);
  };
}

/** A program whose verbs in `reads` (and no verb) only read; any other verb changes `path`. */
function verbs(path: string, reads: readonly string[], valueOptions = ''): Collector {
  return (args, env) => {
    if (onlyHelp(args)) return;
    const v = verb(args, valueOptions);
    if (v === '' || (v !== null && reads.includes(v))) return;
    changes(env, path);
  };
}

/** A program whose options in `writes` (short letters or long names) change `path`. */
function options(path: string, writes: RegExp): Collector {
  return (args, env) => {
    if (args.some((a) => a.value === null || writes.test(a.value))) changes(env, path);
  };
}

/** systemctl verbs that change nothing lasting: they read, or (re)start a unit (the shutdown rule sees targets). */
const SYSTEMCTL_READS = [
  'start',
  'restart',
  'reload',
  'try-restart',
  'reload-or-restart',
  'try-reload-or-restart',
  'status',
  'show',
  'cat',
  'list-units',
  'list-unit-files',
  'list-sockets',
  'list-timers',
  'list-jobs',
  'list-dependencies',
  'list-machines',
  'is-active',
  'is-enabled',
  'is-failed',
  'is-system-running',
  'get-default',
  'help',
  'show-environment',
];

/** Programs that change system state without a path argument, by name. */
export const SYSTEM_STATE: Readonly<Record<string, Collector>> = {
  // The cron spool: everything but -l (list) changes it (-r removes, -e edits, FILE installs).
  crontab: (args, env) => {
    if (!args.some((a) => /^-[A-Za-z]*l/.test(a.value ?? '')) && !onlyHelp(args))
      changes(env, '/var/spool/cron');
  },
  atrm: always('/var/spool/cron/atjobs'),
  // The user and group databases; passwords live in the shadow file.
  passwd: (args, env) => {
    if (args.some((a) => /^(-S|--status)$/.test(a.value ?? '')) || onlyHelp(args)) return;
    changes(env, '/etc/shadow');
  },
  chpasswd: always('/etc/shadow'),
  chage: options('/etc/shadow', /^-[^lh]|^--(?!list|help)/),
  useradd: always('/etc/passwd'),
  adduser: always('/etc/passwd'),
  userdel: always('/etc/passwd'),
  deluser: always('/etc/passwd'),
  usermod: always('/etc/passwd'),
  chsh: always('/etc/passwd'),
  chfn: always('/etc/passwd'),
  newusers: always('/etc/passwd'),
  vipw: always('/etc/passwd'),
  groupadd: always('/etc/group'),
  addgroup: always('/etc/group'),
  groupdel: always('/etc/group'),
  delgroup: always('/etc/group'),
  groupmod: always('/etc/group'),
  gpasswd: always('/etc/group'),
  visudo: options('/etc/sudoers', /^(?!-c$|--check$)/),
  // Services: enable/disable/mask links, stop or kill units, reload the manager.
  systemctl: verbs('/etc/systemd/system', SYSTEMCTL_READS, 'HMtpsnoP'),
  service: (args, env) => {
    const action = args[1]?.value ?? null;
    if (args.length === 0 || onlyHelp(args) || args[0]?.value === '--status-all') return;
    if (action !== null && ['status', 'start', 'restart', 'reload', 'try-restart'].includes(action)) return;
    changes(env, '/etc/init.d');
  },
  'update-rc.d': always('/etc/init.d'),
  chkconfig: verbs('/etc/init.d', ['--list']),
  'rc-update': verbs('/etc/init.d', ['show', '']),
  launchctl: verbs('/Library/LaunchDaemons', ['list', 'print', 'print-disabled', 'blame', 'help', 'version']),
  // Host settings.
  hostnamectl: verbs('/etc/hostname', ['status', 'hostname']),
  timedatectl: verbs('/etc/localtime', [
    'status',
    'show',
    'list-timezones',
    'timesync-status',
    'show-timesync',
  ]),
  localectl: verbs('/etc/locale.conf', ['status', 'list-locales', 'list-keymaps', 'list-x11-keymap-models']),
  setenforce: always('/etc/selinux/config'),
  sysctl: options('/proc/sys', /^-[A-Za-z]*[wp]|^--(write|load|system)|=/),
  swapoff: always('/proc/swaps'),
  swapon: options('/proc/swaps', /^(?!-s$|--summary$|--show)/),
  modprobe: options('/lib/modules', /^(?!-n$|--dry-run$|--show-depends$|-c$|--showconfig$)/),
  insmod: always('/lib/modules'),
  rmmod: always('/lib/modules'),
  // Firewalls: listing reads; any other form changes the tables.
  iptables: options(
    '/etc/iptables',
    /^-[A-Za-z]*[ADIRFZNXPE]|^--(append|delete|insert|replace|flush|zero|new-chain|delete-chain|policy|rename-chain)/,
  ),
  ip6tables: options(
    '/etc/iptables',
    /^-[A-Za-z]*[ADIRFZNXPE]|^--(append|delete|insert|replace|flush|zero|new-chain|delete-chain|policy|rename-chain)/,
  ),
  nft: verbs('/etc/nftables.conf', ['list', 'describe', '-c']),
  ufw: verbs('/etc/ufw', ['status', 'show', 'version', 'app']),
  'firewall-cmd': options(
    '/etc/firewalld',
    /^--(add|remove|set|reload|complete-reload|panic|runtime-to-permanent|new|delete|change)/,
  ),
};
