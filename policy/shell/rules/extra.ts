/**
 * Hardline rules for system and disk actions beyond disk.ts / system.ts: disk
 * erase tools, volume and pool destruction, killing every process of a user, power-off through
 * D-Bus, git hooks redirection, and forced remote updates through programs other than
 * `git push`.
 */
import type { Verdict } from '../effects/env.ts';
import type { Field } from '../syntax/field.ts';
import type { CommandRule } from './kit.ts';

const values = (args: readonly Field[]): string[] => args.map((a) => (a.value ?? '').toLowerCase());

/** cryptsetup erase/luksErase/luksFormat, badblocks -w, hdparm --security-erase, blkdiscard, nvme format/sanitize, sg_format. */
export const diskErase: CommandRule = {
  ids: ['hardline.disk-erase'],
  applies: (n) =>
    [
      'flashrom',
      'cryptsetup',
      'badblocks',
      'hdparm',
      'blkdiscard',
      'nvme',
      'sg_format',
      'sg_sanitize',
    ].includes(n),
  check(args, _env, name): Verdict {
    const v = values(args);
    const hit: Verdict = { match: 'hardline.disk-erase', detail: name };
    if (name === 'blkdiscard' || name === 'sg_format' || name === 'sg_sanitize') return hit;
    if (name === 'cryptsetup')
      return v.some((x) =>
        [
          'erase',
          'luksErase'.toLowerCase(),
          'luksformat',
          'reencrypt',
          'luksremovekey',
          'lukskillslot',
        ].includes(x),
      )
        ? hit
        : null;
    if (name === 'badblocks') return v.some((x) => /^-[a-z]*[wn]/.test(x)) ? hit : null;
    if (name === 'hdparm')
      return v.some((x) =>
        /^--(security-erase|security-erase-enhanced|trim-sector-ranges|write-sector|make-bad-sector|dco-restore|security-set-pass)/.test(
          x,
        ),
      )
        ? hit
        : null;
    if (name === 'flashrom') return v.some((x) => /^(-w|--write|-e|--erase|-E)$/i.test(x)) ? hit : null;
    if (name === 'nvme') return v.some((x) => ['format', 'sanitize', 'delete-ns'].includes(x)) ? hit : null;
    return null;
  },
};

/** zpool destroy/labelclear, zfs destroy, lvremove, vgremove, pvremove, lvreduce, dmsetup remove_all, mdadm --zero-superblock. */
export const volumeDestroy: CommandRule = {
  ids: ['hardline.volume-destroy'],
  applies: (n) =>
    ['zpool', 'zfs', 'lvremove', 'vgremove', 'pvremove', 'lvreduce', 'dmsetup', 'mdadm'].includes(n),
  check(args, _env, name): Verdict {
    const v = values(args);
    const hit: Verdict = { match: 'hardline.volume-destroy', detail: name };
    if (['lvremove', 'vgremove', 'pvremove', 'lvreduce'].includes(name)) return hit;
    if (name === 'zpool') return v.some((x) => ['destroy', 'labelclear'].includes(x)) ? hit : null;
    if (name === 'zfs') return v.includes('destroy') ? hit : null;
    if (name === 'dmsetup') return v.some((x) => ['remove_all', 'wipe_table'].includes(x)) ? hit : null;
    if (name === 'mdadm') return v.some((x) => x === '--zero-superblock') ? hit : null;
    return null;
  },
};

/** pkill/killall -u USER, pkill with a match-everything pattern, kill -1 in any signal spelling. */
export const killUser: CommandRule = {
  ids: ['hardline.kill-all-user'],
  applies: (n) =>
    ['pkill', 'killall', 'skill', 'slay', 'taskkill', 'stop-process', 'spps', 'kill-process'].includes(n),
  check(args, env, name): Verdict {
    const hit: Verdict = { match: 'hardline.kill-all-user', detail: name };
    const v = args.map((a) => a.value);
    if (name === 'skill' || name === 'slay') return hit;
    const lower = v.map((x) => (x ?? '').toLowerCase());
    if (name === 'taskkill') {
      // taskkill /IM * or /FI "USERNAME eq x": every process (of a user).
      const im = lower.findIndex((x) => x === '/im' || x === '-im');
      if (im >= 0 && /^\*|\*$/.test(lower[im + 1] ?? '')) return hit;
      return lower.some((x) => /username\s+(eq|ne)/.test(x)) ? hit : null;
    }
    if (name === 'stop-process' || name === 'spps' || name === 'kill-process') {
      const named = lower.findIndex((x) => x === '-name' || x === '-processname' || x === '-id');
      if (named >= 0 && (lower[named + 1] ?? '').includes('*')) return hit;
      // Get-Process | Stop-Process: whatever the pipe lists (usually everything).
      return named < 0 && !lower.some((x) => /^[^-]/.test(x)) && env.stdin.kind === 'pipe' ? hit : null;
    }
    if (
      v.some(
        (x) =>
          x !== null && /^(-u|--uid|--euid|-U|--user)(=.*)?$|^-[A-Za-z0-9]*u/.test(x) && !/^-\d+$/.test(x),
      )
    )
      return hit;
    const patterns = v.filter((x) => x !== null && !x.startsWith('-'));
    if (patterns.some((x) => x === '.' || x === '.*' || x === '')) return hit;
    return null;
  },
};

/** dbus-send / busctl / gdbus / qdbus calls of login1 or session-manager power actions; loginctl kill/terminate. */
export const powerBus: CommandRule = {
  ids: ['hardline.power-off-bus'],
  applies: (n) =>
    [
      'dbus-send',
      'busctl',
      'gdbus',
      'qdbus',
      'qdbus6',
      'loginctl',
      'gnome-session-quit',
      'xfce4-session-logout',
      'rtcwake',
    ].includes(n),
  check(args, _env, name): Verdict {
    const hit: Verdict = { match: 'hardline.power-off-bus', detail: name };
    const v = values(args);
    if (name === 'gnome-session-quit' || name === 'xfce4-session-logout') return hit;
    if (name === 'rtcwake')
      return v.some(
        (x, i) =>
          /^(-m|--mode)$/.test(v[i - 1] ?? '') && ['off', 'disk', 'mem', 'standby', 'freeze'].includes(x),
      ) || v.some((x) => /^--mode=(off|disk|mem)/.test(x))
        ? hit
        : null;
    if (name === 'loginctl')
      return v.some((x) =>
        ['kill-user', 'terminate-user', 'kill-session', 'terminate-session', 'suspend', 'hibernate'].includes(
          x,
        ),
      )
        ? hit
        : null;
    const text = v.join(' ');
    return /(power-?off|reboot|halt|shutdown|logout|suspend|hibernate|kexec|requestshutdown|requestreboot)/.test(
      text,
    )
      ? hit
      : null;
  },
};

/** git config core.hooksPath (and -c core.hooksPath=...): git then runs hooks from that directory. */
export const gitHooksPath: CommandRule = {
  ids: ['hardline.git-hooks-path'],
  applies: (n) => n === 'git' || n === 'hub',
  check(args): Verdict {
    const v = values(args);
    const hooks = v.some((x) => /(^|[=\s.])core\.hookspath\b/.test(x) || x === 'core.hookspath');
    if (!hooks) return null;
    if (v.includes('--get') || v.includes('--get-all') || v.includes('--unset') || v.includes('--list'))
      return null;
    return { match: 'hardline.git-hooks-path', detail: 'core.hooksPath' };
  },
};

/** hub push --force, git send-pack --force / +refspec, gh repo sync --force. */
export const forceOther: CommandRule = {
  ids: ['hardline.force-push-other'],
  applies: (n) => n === 'hub' || n === 'git' || n === 'gh' || n === 'glab' || n === 'git-send-pack',
  check(args, _env, name): Verdict {
    const v = values(args);
    const hit: Verdict = { match: 'hardline.force-push-other', detail: name };
    // gh api -X PATCH repos/o/r/git/refs/heads/main -f force=true: a forced ref update.
    if (
      name === 'gh' &&
      v.includes('api') &&
      v.some((x) => /git\/refs/.test(x)) &&
      v.some((x) => /^force=(true|1)$/.test(x))
    )
      return hit;
    const forced = v.some(
      (x) => x === '--force' || x === '-f' || x.startsWith('--force-') || /^\+/.test(x) || x === '--mirror',
    );
    if (!forced) return null;
    if (name === 'gh' || name === 'glab') return v.includes('sync') || v.includes('push') ? hit : null;
    if (name === 'git-send-pack') return hit;
    if (v.includes('send-pack')) return hit;
    if (name === 'hub' && v.includes('push')) return hit;
    return null;
  },
};
