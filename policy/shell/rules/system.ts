/** Hardline rules for the whole system: shutdown/reboot, killing every process, remote history rewrite. */
import type { Verdict } from '../effects/env.ts';
import type { Field } from '../syntax/field.ts';
import { gitVerdict, parseGit } from '../programs/git.ts';
import { parseOptions } from '../programs/options.ts';
import type { CommandRule } from './kit.ts';

/** shutdown/reboot/halt/poweroff, init 0/1/6, systemctl/loginctl poweroff|reboot|halt, Stop-/Restart-Computer. */
export const shutdown: CommandRule = {
  ids: ['hardline.system-shutdown'],
  applies: (n) =>
    [
      'shutdown',
      'reboot',
      'halt',
      'poweroff',
      'init',
      'telinit',
      'systemctl',
      'loginctl',
      'stop-computer',
      'restart-computer',
      'openrc-shutdown',
    ].includes(n),
  check(args, _env, name) {
    const hit: Verdict = { match: 'hardline.system-shutdown', detail: name };
    if (name === 'shutdown') {
      const vals = args.map((a) => a.value?.toLowerCase());
      if (vals.some((v) => v === '-c' || v === '/a' || v === '--help')) return null;
      return hit;
    }
    if (name === 'init' || name === 'telinit') {
      const v = args[0];
      if (v === undefined) return null;
      if (v.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: `${name} runlevel is not literal` };
      return ['0', '1', '6', 's', 'S'].includes(v.value) ? hit : null;
    }
    if (name === 'systemctl' || name === 'loginctl') {
      const p = parseOptions(args, {
        shortValue: 'HMtpsnoP',
        longValue: [
          'host',
          'machine',
          'type',
          'property',
          'signal',
          'lines',
          'output',
          'root',
          'message',
          'when',
        ],
      });
      const verb = p.operands[0];
      if (verb === undefined) return null;
      if (verb.value === null)
        return { unknown: 'unanalyzable.dynamic-argument', detail: `${name} verb is not literal` };
      const v = verb.value.toLowerCase();
      if (['poweroff', 'reboot', 'halt', 'kexec', 'soft-reboot', 'emergency', 'rescue'].includes(v))
        return hit;
      if (['start', 'isolate', 'restart'].includes(v)) {
        const targets = p.operands.slice(1).map((o) => o.value?.toLowerCase() ?? null);
        if (targets.some((t) => t === null))
          return { unknown: 'unanalyzable.dynamic-argument', detail: `${name} unit is not literal` };
        if (
          targets.some((t) =>
            /^(poweroff|reboot|halt|kexec|shutdown|emergency|rescue)(\.target)?$/.test(t ?? ''),
          )
        )
          return hit;
      }
      return null;
    }
    return hit;
  },
};

const ALL_PATTERNS = new Set(['.', '.*', '^', '$', '^.*$', '.+', '^.*', '']);

/** kill of pid -1 (any signal), killall5, pkill/killall of a match-everything pattern. */
export const kill: CommandRule = {
  ids: ['hardline.kill-all-processes'],
  applies: (n) => ['kill', 'killall5', 'pkill', 'killall'].includes(n),
  check(args, _env, name) {
    const hit: Verdict = { match: 'hardline.kill-all-processes', detail: `${name} of every process` };
    if (name === 'killall5') return hit;
    // pkill -v PATTERN (--inverse) kills every process that does not match; -P 1 every child of init.
    if (name === 'pkill' && args.some((a) => /^-[A-Za-z0-9]*v|^--inv/.test(a.value ?? ''))) return hit;
    if (
      name === 'pkill' &&
      args.some((a, i) => /^(-P|--parent)$/.test(a.value ?? '') && /^(0|1)$/.test(args[i + 1]?.value ?? ''))
    )
      return hit;
    if (name === 'pkill' || name === 'killall') {
      const operands = args.filter((a) => a.value === null || !a.value.startsWith('-'));
      return operands.some((o) => o.value !== null && ALL_PATTERNS.has(o.value)) ? hit : null;
    }
    let i = 0;
    const first = args[0];
    if (
      first?.value === '-l' ||
      first?.value === '-L' ||
      first?.value === '--list' ||
      first?.value === '--table'
    )
      return null;
    if (first?.value === '-s' || first?.value === '-n' || first?.value === '--signal') i = 2;
    else if (first?.value?.startsWith('-') && first.value !== '--' && !/^-0*1$/.test(first.value)) i = 1;
    else if (
      first?.value !== undefined &&
      first.value !== null &&
      /^-0*1$/.test(first.value) &&
      args.length > 1
    )
      i = 1;
    for (; i < args.length; i++) {
      const a = args[i] as Field;
      if (a.value === '--') continue;
      if (a.value === null) {
        if (a.pids) continue;
        return { unknown: 'unanalyzable.dynamic-argument', detail: 'kill of a pid only known at run time' };
      }
      if (/^-0*1$/.test(a.value)) return hit;
    }
    if (args.some((a) => a.value === null && !a.pids))
      return { unknown: 'unanalyzable.dynamic-argument', detail: 'kill with a non-literal signal' };
    return null;
  },
};

/** git push --force/-f/--force-with-lease/--force-if-includes/--mirror, +refspec, filter-branch, filter-repo. */
export const git: CommandRule = {
  ids: [
    'hardline.git-push-force',
    'hardline.git-push-force-refspec',
    'hardline.git-filter-branch',
    'hardline.git-filter-repo',
  ],
  applies: (n) => n === 'git' || n === 'git-filter-branch' || n === 'git-filter-repo',
  check(args, _env, name) {
    if (name === 'git-filter-branch') return { match: 'hardline.git-filter-branch', detail: name };
    if (name === 'git-filter-repo') return { match: 'hardline.git-filter-repo', detail: name };
    return gitVerdict(parseGit(args));
  },
};
