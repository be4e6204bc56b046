/**
 * The findings of one analysis: first hardline match, first unanalyzable reason, first caution
 * (an effect the analysis cannot account for), reads, writes, probes, trees and globs.
 */
import type { TreeWalk } from '../../seams.ts';
import type { CautionRuleId, HardlineRuleId, UnanalyzableRuleId } from '../rules/ids.ts';
import { normalizePosix } from './paths.ts';

/** Access of a tree walk or glob. */
export type Access = 'read' | 'write';

/** How a tree is walked: following links, listing names only (TreeWalk). */
export interface TreeHow {
  readonly follow?: boolean;
  readonly names?: boolean;
  readonly fills?: boolean;
  /** A write walk whose tests may spare what it reaches (`find . -name '*.pyc' -delete`). */
  readonly filtered?: boolean;
}

/** Accumulates what the walk finds; shared by nested analyses of the same command string. */
export class Findings {
  hardline: { readonly ruleId: HardlineRuleId; readonly detail: string } | null = null;
  unanalyzable: { readonly ruleId: UnanalyzableRuleId; readonly detail: string } | null = null;
  caution: { readonly ruleId: CautionRuleId; readonly detail: string } | null = null;
  readonly reads = new Set<string>();
  readonly writes = new Set<string>();
  readonly probes = new Set<string>();
  readonly trees = new Map<string, TreeWalk>();
  readonly globs = new Map<string, { readonly pattern: string; readonly access: Access }>();
  /** Normalized texts of every path written so far (for generated-script detection). */
  private readonly written = new Set<string>();
  /** Normalized texts of every link made so far (later uses of them are not static paths). */
  private readonly linked = new Set<string>();

  /** Keeps the first hardline match. */
  hit(ruleId: HardlineRuleId, detail: string): void {
    this.hardline ??= { ruleId, detail };
  }

  /** Keeps the first unanalyzable reason. */
  cannot(ruleId: UnanalyzableRuleId, detail: string): void {
    this.unanalyzable ??= { ruleId, detail };
  }

  /** Keeps the first caution. */
  needsHuman(ruleId: CautionRuleId, detail: string): void {
    this.caution ??= { ruleId, detail };
  }

  /** Records a write (as written) and remembers it for generated-script detection. */
  addWrite(text: string): void {
    this.writes.add(text);
    this.written.add(normalizePosix(text));
  }

  /** Records a recursive walk of `path` (see TreeWalk for `follow` and `names`). */
  addTree(path: string, access: Access, how: TreeHow = {}): void {
    const flags = `${how.follow === true ? 'L' : ''}${how.names === true ? 'N' : ''}${how.fills === true ? 'F' : ''}${how.filtered === true ? 'T' : ''}`;
    const key = `${access}\0${flags}\0${path}`;
    if (!this.trees.has(key)) {
      const walk: TreeWalk = { path, access };
      this.trees.set(key, {
        ...walk,
        ...(how.follow === true ? { follow: true } : {}),
        ...(how.names === true ? { names: true } : {}),
        ...(how.fills === true ? { fills: true } : {}),
        ...(how.filtered === true ? { filtered: true } : {}),
      });
    }
  }

  /** Records a glob pattern in a path position. */
  addGlob(pattern: string, access: Access): void {
    const key = `${access}\0${pattern}`;
    if (!this.globs.has(key)) this.globs.set(key, { pattern, access });
  }

  /** Remembers a link made by the command (`ln`, `ln -s`, `cp -s`, `link`). */
  addLink(text: string): void {
    this.linked.add(normalizePosix(text));
  }

  /** True when `text` is a link made earlier in the command, or lies beneath one. */
  isLinked(text: string): boolean {
    if (this.linked.size === 0) return false;
    const n = normalizePosix(text);
    for (const l of this.linked) if (n === l || n.startsWith(l === '/' ? '/' : l + '/')) return true;
    return false;
  }

  /** True when `text` was written earlier in the command string. */
  wasWritten(text: string): boolean {
    return this.written.has(normalizePosix(text));
  }
}
