/**
 * The runtime's own control surface is off limits to agents: a shell command that runs
 * `snotra inbox approve|deny` (directly, through `node …/snotra.js`, `npx`, `npm run` or `tsx`)
 * would let an agent decide its own approvals. Defence in depth: the CLI also refuses processes
 * that descend from the runtime, and the state dir is a sensitive path.
 */
import type { Field } from '../syntax/field.ts';
import type { CommandRule } from './kit.ts';

const LAUNCHERS = new Set(['node', 'nodejs', 'npx', 'npm', 'pnpm', 'yarn', 'tsx', 'bun', 'deno']);
const CLI_ENTRY = /(^|[\\/])(snotra(\.js|\.mjs|\.cjs)?|main\.ts)$/;

function decides(args: readonly Field[], from: number): boolean {
  const values = args.slice(from).map((a) => a.value);
  const inbox = values.indexOf('inbox');
  return inbox >= 0 && values.slice(inbox + 1).some((v) => v === 'approve' || v === 'deny');
}

/** `snotra inbox approve|deny` run by an agent: hardline. */
export const runtimeControl: CommandRule = {
  ids: ['hardline.runtime-control'],
  applies: (n) => n === 'snotra' || LAUNCHERS.has(n),
  check(args, _env, name) {
    const hit = {
      match: 'hardline.runtime-control' as const,
      detail: 'an agent deciding approvals through the runtime CLI',
    };
    if (name === 'snotra') return decides(args, 0) ? hit : null;
    const entry = args.findIndex(
      (a) => a.value !== null && (CLI_ENTRY.test(a.value) || a.value === 'snotra'),
    );
    return entry >= 0 && decides(args, entry + 1) ? hit : null;
  },
};
