import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import { createShellAnalyzer, HARDLINE_RULES, UNANALYZABLE_RULES } from '../../policy/shell/index.ts';
import { SHELL_CORPUS } from './shell-corpus.ts';

let analyzer: CommandAnalyzer;
beforeAll(async () => {
  analyzer = await createShellAnalyzer();
});

/** The corpus outcome of one analysis. */
function outcome(command: string): { expect: string; ruleId: string | null; writes: readonly string[] } {
  const a = analyzer.analyze(command);
  if (a.kind === 'unanalyzable') return { expect: 'unanalyzable', ruleId: a.ruleId, writes: [] };
  if (a.hardline) return { expect: 'hardline', ruleId: a.hardline.ruleId, writes: a.writes };
  return { expect: 'ok', ruleId: null, writes: a.writes };
}

describe('shell corpus', () => {
  it('is large and has unique commands', () => {
    expect(SHELL_CORPUS.length).toBeGreaterThanOrEqual(220);
    const plain = SHELL_CORPUS.filter((c) => c.writes === undefined).map((c) => c.command);
    expect(plain.filter((c, i) => plain.indexOf(c) !== i)).toEqual([]);
  });

  it('covers every hardline rule', () => {
    // The state-dir rule needs the runtime's paths: shell-failclosed.test.ts covers it.
    const used = new Set([...SHELL_CORPUS.map((c) => c.ruleId), 'hardline.recursive-runtime-state']);
    expect(HARDLINE_RULES.map((r) => r.id).filter((id) => !used.has(id))).toEqual([]);
  });

  it('only names known rule ids', () => {
    const known = new Set<string>([...HARDLINE_RULES, ...UNANALYZABLE_RULES].map((r) => r.id));
    expect(
      SHELL_CORPUS.filter((c) => c.ruleId !== undefined && !known.has(c.ruleId)).map((c) => c.ruleId),
    ).toEqual([]);
  });

  it.each(SHELL_CORPUS.map((c) => [JSON.stringify(c.command), c] as const))('%s', (_name, c) => {
    const got = outcome(c.command);
    expect({ expect: got.expect, ruleId: c.ruleId === undefined ? undefined : got.ruleId }).toEqual({
      expect: c.expect,
      ruleId: c.ruleId,
    });
    if (c.writes !== undefined) expect([...got.writes].sort()).toEqual([...c.writes].sort());
  });
});
