/**
 * Tracking of the working directory through `cd`, `pushd` and `popd`, as a set of possible
 * directories (a cd under a condition adds a possibility instead of replacing), so that
 * `cd / && rm -rf *` is seen as `rm -rf /*`.
 */
import type { Resolved, StdinSource } from './env.ts';
import type { Field } from '../syntax/field.ts';
import type { PathRef } from './paths.ts';

/** One possible working directory; null when only known at run time. */
export type CwdEntry = { readonly text: string; readonly pattern: string; readonly tilde: boolean } | null;

const START: CwdEntry = { text: '.', pattern: '.', tilde: false };
const HOME: CwdEntry = { text: '~', pattern: '~', tilde: true };

/** Bound on tracked possibilities; beyond it the cwd is only known at run time. */
const MAX_ENTRIES = 16;

function isAnchored(f: Field): boolean {
  const v = f.value ?? '';
  return v.startsWith('/') || f.tilde || /^[a-zA-Z]:/.test(v) || (f.win ?? '').startsWith('\\');
}

/** The path a literal field names, as written (a quoted leading `~` is a relative name). */
export function refOf(f: Field & { value: string; pattern: string }): PathRef {
  const quotedTilde = f.value.startsWith('~') && !f.tilde;
  return {
    text: quotedTilde ? './' + f.value : f.value,
    pattern: quotedTilde ? './' + f.pattern : f.pattern,
    tilde: f.tilde,
    glob: f.glob,
    win: f.win,
  };
}

function join(dir: NonNullable<CwdEntry>, ref: PathRef): PathRef {
  if (dir.text === '.') return ref;
  const sep = (s: string): string => (s.endsWith('/') ? s : s + '/');
  return {
    text: sep(dir.text) + ref.text,
    pattern: sep(dir.pattern) + ref.pattern,
    tilde: dir.tilde,
    glob: ref.glob,
    win: null,
  };
}

/**
 * Logical path text as bash's `cd` computes it: `.` and empty segments dropped, `name/..`
 * removed textually; a leading `~` (home) and `/` stay, and `..` above them is kept.
 */
export function logical(text: string): string {
  const absolute = text.startsWith('/');
  const out: string[] = [];
  for (const seg of text.split('/')) {
    if (seg === '' || seg === '.') continue;
    const prev = out.at(-1);
    if (
      seg === '..' &&
      prev !== undefined &&
      prev !== '..' &&
      !(out.length === 1 && prev === '~' && text.startsWith('~'))
    )
      out.pop();
    else if (seg === '..' && absolute && prev === undefined) continue;
    else out.push(seg);
  }
  const joined = out.join('/');
  if (absolute) return '/' + joined;
  return joined === '' ? '.' : joined;
}

/** The set of possible working directories of a shell (and its pushd stack). */
export class CwdScope {
  private entries: CwdEntry[] = [START];
  private stack: CwdEntry[][] = [];
  /** Set when CDPATH is assigned: relative cd targets may then go anywhere. */
  cdpathTainted = false;
  /** Set when HOME is assigned: `~` may then name any directory. */
  homeTainted = false;
  /** The shell's stdin after `exec < file` / `exec <<< code` (null: the tool's stdin). */
  execStdin: StdinSource | null = null;

  /** A copy for a subshell (changes in it do not come back). */
  clone(): CwdScope {
    const c = new CwdScope();
    c.entries = [...this.entries];
    c.stack = this.stack.map((s) => [...s]);
    c.cdpathTainted = this.cdpathTainted;
    c.homeTainted = this.homeTainted;
    c.execStdin = this.execStdin;
    return c;
  }

  /** The possible working directories now (to add back later with `include`). */
  snapshot(): CwdEntry[] {
    return [...this.entries];
  }

  /** Adds possible working directories (a cd that may have failed, a branch that may not have run). */
  include(entries: readonly CwdEntry[]): void {
    this.set([...entries], true);
  }

  /** Resolves a field against every possible cwd. */
  resolve(f: Field): Resolved {
    if (f.value === null || f.pattern === null) return { refs: [], unknown: true };
    if (f.tilde && /^~[+-](\/|$)/.test(f.value)) {
      // ~+ is $PWD, ~- is $OLDPWD.
      if (f.value.startsWith('~-')) return { refs: [], unknown: true };
      const rest = f.value.slice(2).replace(/^\//, '');
      const restPattern = f.pattern.slice(2).replace(/^\//, '');
      return this.resolve({
        ...f,
        value: rest === '' ? '.' : rest,
        pattern: restPattern === '' ? '.' : restPattern,
        tilde: false,
        win: null,
      });
    }
    const ref = refOf(f as Field & { value: string; pattern: string });
    if (isAnchored(f)) return { refs: [ref], unknown: f.tilde && this.homeTainted };
    const refs: PathRef[] = [];
    let unknown = false;
    for (const dir of this.entries) {
      if (dir === null) unknown = true;
      else refs.push(join(dir, ref));
      if (dir?.tilde && this.homeTainted) unknown = true;
    }
    return { refs, unknown };
  }

  private target(f: Field | null, physical = false): CwdEntry[] {
    if (f === null) return [HOME];
    if (f.value === null || f.pattern === null || f.value === '-') return [null];
    const relative = !isAnchored(f);
    if (relative && this.cdpathTainted && !/^\.\.?(\/|$)/.test(f.value)) return [null];
    const r = this.resolve(f);
    // bash's cd is logical: `cd link/..` removes `link/..` from the text, it does not follow link.
    const out: CwdEntry[] = r.refs.map((ref) =>
      physical || ref.glob
        ? { text: ref.text, pattern: ref.pattern, tilde: ref.tilde }
        : { text: logical(ref.text), pattern: logical(ref.pattern), tilde: ref.tilde },
    );
    if (r.unknown) out.push(null);
    return out;
  }

  private set(next: CwdEntry[], conditional: boolean): void {
    const all = conditional ? [...this.entries, ...next] : next;
    const seen = new Set<string>();
    const dedup: CwdEntry[] = [];
    for (const e of all) {
      const key = e === null ? '\0' : e.pattern;
      if (!seen.has(key)) {
        seen.add(key);
        dedup.push(e);
      }
    }
    this.entries = dedup.length > MAX_ENTRIES ? [null] : dedup;
  }

  /** Applies cd / pushd / popd with `target` (null: no operand). */
  change(kind: 'cd' | 'pushd' | 'popd', target: Field | null, conditional: boolean, physical = false): void {
    if (kind === 'popd') {
      const prev = this.stack.pop() ?? [null];
      this.set(prev, conditional);
      return;
    }
    if (kind === 'pushd') {
      this.stack.push([...this.entries]);
      this.set(target === null ? [null] : this.target(target, physical), conditional);
      return;
    }
    this.set(this.target(target, physical), conditional);
  }
}
