/**
 * Programs that run a command line they are given: terminal emulators (`xterm -e`,
 * `gnome-terminal --`, `kitty PROGRAM`) and `man -P PAGER`. One word with blanks is shell code.
 */
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import type { WrapResult, Wrapper } from './wrap.ts';

function exec(argv: readonly Field[]): WrapResult {
  return argv.length === 0 ? { kind: 'done' } : { kind: 'exec', argvs: [argv] };
}

/** Joins literal words into shell code (dynamic words make it unknown). */
function codeOf(words: readonly Field[], what: string): WrapResult {
  if (words.length === 0) return { kind: 'done' };
  if (words.some((w) => w.value === null))
    return { kind: 'unknown', ruleId: 'unanalyzable.dynamic-code', detail: `${what} is not literal` };
  return { kind: 'code', code: words.map((w) => w.value ?? '').join(' ') };
}

/** Terminal emulators: `-e cmd args` / `-x` / `--` run a command (one word with blanks: shell code). */
const terminal: Wrapper = (args, _env, name) => {
  const i = args.findIndex((a) => ['-e', '-x', '--', '--command', '--execute', '-c'].includes(a.value ?? ''));
  if (i < 0 && (name === 'kitty' || name === 'foot')) {
    // kitty / foot [options] PROGRAM ARGS...: the first word that is no option runs.
    const at = args.findIndex((a) => a.value === null || !a.value.startsWith('-'));
    return at < 0 ? { kind: 'done' } : exec(args.slice(at));
  }
  if (i < 0) {
    const eq = args.find((a) => /^--(command|execute)=/.test(a.value ?? ''));
    if (eq?.value == null) return { kind: 'done' };
    return codeOf([literalField(eq.value.slice(eq.value.indexOf('=') + 1))], `${name} command`);
  }
  const rest = args.slice(i + 1);
  if (rest.length === 1 && /\s/.test(rest[0]?.value ?? '')) return codeOf(rest, `${name} command`);
  return exec(rest);
};

/** man -P/--pager, -H/--html: a command man runs. */
const man: Wrapper = (args, env, name) => {
  // `man ./page.1`, `man ~/x`: an operand with a slash is a file man reads.
  for (const a of args)
    if (a.value !== null && !a.value.startsWith('-') && a.value.includes('/')) env.read(a);
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value ?? null;
    if (v === null) continue;
    if (v === '-P' || v === '--pager' || v === '-H' || v === '--html') {
      const next = args[i + 1];
      return next === undefined ? { kind: 'done' } : codeOf([next], `${name} pager`);
    }
    const m = /^(?:-P|--pager=|-H|--html=)(.+)$/s.exec(v);
    if (m !== null) return codeOf([literalField(m[1] ?? '')], `${name} pager`);
  }
  return { kind: 'done' };
};

/** Command runners by program name. */
export const TERMINALS: Readonly<Record<string, Wrapper>> = {
  man,
  xterm: terminal,
  uxterm: terminal,
  'x-terminal-emulator': terminal,
  'gnome-terminal': terminal,
  konsole: terminal,
  alacritty: terminal,
  kitty: terminal,
  urxvt: terminal,
  rxvt: terminal,
  st: terminal,
  terminator: terminal,
  tilix: terminal,
  'xfce4-terminal': terminal,
  wezterm: terminal,
  foot: terminal,
};
