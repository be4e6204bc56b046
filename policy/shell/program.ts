/** Program identity: the basename of a literal command word, quoting removed, case folded. */
import type { Field } from './field.ts';

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
  return names.filter((n) => n !== '');
}
