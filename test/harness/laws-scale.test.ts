// Every fast-check law scales with the deep mode (issue 29): `npm run test:laws:deep` multiplies
// the runs of each law by SNOTRA_LAWS_SCALE through `runs(n)` / `cappedRuns(n, cap)`
// (test/support/laws.ts). A law that takes fast-check's default, or a fixed `numRuns: 20`, stays at
// its usual count there and a rare counterexample never shows; this file finds such laws.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SCALED = /\b(runs|cappedRuns)\(/;

/** The `fc.assert` calls of `source` whose run count does not come from runs()/cappedRuns(), by line. */
function unscaledLaws(source: string, fileName = 'law.test.ts'): number[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  // What a plain identifier passed as the parameters stands for (`const RUNS = { numRuns: runs(300) }`).
  const consts = new Map<string, string>();
  const bad: number[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer)
      consts.set(node.name.text, node.initializer.getText(sf));
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'assert' &&
      node.expression.expression.getText(sf) === 'fc'
    ) {
      const params = node.arguments[1];
      const text = params === undefined ? '' : params.getText(sf);
      const resolved = params !== undefined && ts.isIdentifier(params) ? (consts.get(text) ?? '') : text;
      if (!/\bnumRuns\b/.test(resolved) || !SCALED.test(resolved))
        bad.push(sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return bad;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : testFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('every fast-check law scales with the deep mode', () => {
  it('finds a law on the default or a fixed count, and passes one that asks runs()', () => {
    const unscaled = [
      'fc.assert(fc.property(fc.nat(), (n) => n >= 0));',
      'fc.assert(fc.property(fc.nat(), (n) => n >= 0), { numRuns: 20 });',
      'fc.assert(fc.property(fc.nat(), (n) => n >= 0), { seed: runs(3) });',
      'const P = { numRuns: 50 };\nfc.assert(fc.property(fc.nat(), (n) => n >= 0), P);',
      'await fc.assert(fc.asyncProperty(fc.nat(), async () => {}), {});',
    ];
    for (const code of unscaled) expect(unscaledLaws(code), code).toEqual([code.split('\n').length]);
    const scaled = [
      'fc.assert(fc.property(fc.nat(), (n) => n >= 0), { numRuns: runs(100) });',
      'await fc.assert(fc.asyncProperty(fc.nat(), async () => {}), { numRuns: cappedRuns(5, 32) });',
      'const RUNS = { numRuns: runs(300) };\nfc.assert(fc.property(fc.nat(), (n) => n >= 0), RUNS);',
      '// fc.assert(fc.property(fc.nat(), (n) => n >= 0));\nexpect.assert(true);',
    ];
    for (const code of scaled) expect(unscaledLaws(code), code).toEqual([]);
  });

  it('no test file holds a law whose runs the deep mode cannot scale', () => {
    const found = testFiles('test')
      .filter((f) => !f.endsWith('laws-scale.test.ts'))
      .flatMap((f) => {
        const source = readFileSync(f, 'utf8');
        return source.includes('fc.assert') ? unscaledLaws(source, f).map((line) => `${f}:${line}`) : [];
      });
    expect(found, 'give each of these { numRuns: runs(n) } (test/support/laws.ts)').toEqual([]);
  });
});
