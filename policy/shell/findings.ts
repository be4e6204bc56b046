/** The findings of one analysis: first hardline match, first unanalyzable reason, reads, writes. */
import type { HardlineRuleId, UnanalyzableRuleId } from './ids.ts';
import { normalizePosix } from './paths.ts';

/** Accumulates what the walk finds; shared by nested analyses of the same command string. */
export class Findings {
  hardline: { readonly ruleId: HardlineRuleId; readonly detail: string } | null = null;
  unanalyzable: { readonly ruleId: UnanalyzableRuleId; readonly detail: string } | null = null;
  readonly reads = new Set<string>();
  readonly writes = new Set<string>();
  /** Normalized texts of every path written so far (for generated-script detection). */
  private readonly written = new Set<string>();

  /** Keeps the first hardline match. */
  hit(ruleId: HardlineRuleId, detail: string): void {
    this.hardline ??= { ruleId, detail };
  }

  /** Keeps the first unanalyzable reason. */
  cannot(ruleId: UnanalyzableRuleId, detail: string): void {
    this.unanalyzable ??= { ruleId, detail };
  }

  /** Records a write (as written) and remembers it for generated-script detection. */
  addWrite(text: string): void {
    this.writes.add(text);
    this.written.add(normalizePosix(text));
  }

  /** True when `text` was written earlier in the command string. */
  wasWritten(text: string): boolean {
    return this.written.has(normalizePosix(text));
  }
}
