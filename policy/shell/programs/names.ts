/** Program identity: the basename of a literal command word, quoting removed, case folded. */
import type { Field } from '../syntax/field.ts';

function basename(path: string, separators: RegExp): string {
  const parts = path.split(separators);
  return parts[parts.length - 1] ?? '';
}

function fold(name: string): string {
  return name.toLowerCase().replace(/\.(exe|com|bat|cmd|ps1)$/, '');
}

/**
 * The names a literal command word may run as, lower-cased (macOS and Windows resolve
 * case-insensitively) with `.exe`/`.com`/`.bat`/`.cmd`/`.ps1` removed: the basename of the
 * POSIX value (`/bin/rm`, `\rm`, `r""m` → `rm`) and, when the word had backslashes, the basename
 * of its Windows reading (`C:\Windows\System32\cmd.exe` → `cmd`). Empty for a dynamic word.
 */
export function programNames(field: Field): string[] {
  if (field.value === null || field.win === null) return [];
  const names = [fold(basename(field.value, /\//))];
  if (field.win.includes('\\')) {
    const alt = fold(basename(field.win, /[\\/]/));
    if (alt !== '' && !names.includes(alt)) names.push(alt);
  }
  // python3.11, perl5.36, ruby3.2, node20, lua5.4, tclsh8.6: the interpreter without its version.
  for (const n of [...names]) {
    const m =
      /^(python|pypy|perl|ruby|php|node|nodejs|lua|luajit|tclsh|wish|julia|deno|bun)[0-9][0-9.]*$/.exec(n);
    if (m !== null && m[1] !== undefined && !names.includes(m[1])) names.push(m[1]);
  }
  return names.filter((n) => n !== '');
}
