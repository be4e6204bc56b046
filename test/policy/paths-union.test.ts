/**
 * A sensitive-path matcher answers from its rules one by one until it has been used
 * `UNION_AFTER` times, then rejects most keys with one union of every rule first. The law: the
 * answer (the first matching rule's id, or null) is the same before and after the union exists.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileRules,
  NEVER_WRITABLE_PATHS,
  posixFlavor,
  SENSITIVE_PATHS,
} from '../../policy/paths/index.ts';
import { UNION_AFTER } from '../../policy/paths/sensitive.ts';
import { runs } from '../support/laws.ts';

const anchors = {
  flavor: posixFlavor,
  homeKeys: ['/home/u', '/home/u'],
  canonicalKey: (k: string) => (k.startsWith('/home/u') ? k.replace('/home/u', '/data/u') : null),
};
const rules = [...SENSITIVE_PATHS, ...NEVER_WRITABLE_PATHS];

const segment = fc.oneof(
  fc.constantFrom('.ssh', '.aws', 'id_rsa', 'credentials', '.env', '.git', 'config', 'hooks', '.SSH', '.ſſh'),
  fc.constantFrom('etc', 'shadow', 'proc', '1', 'environ', 'home', 'u', 'root', 'data', 'tmp', 'notes.txt'),
  fc.stringMatching(/^[a-z.]{1,6}$/),
);
const randomKey = fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => `/${s.join('/')}`);
// Sensitive places and their look-alikes, with a random tail: about half of them match a rule.
const nearKey = fc
  .tuple(
    fc.constantFrom(
      '/home/u/.ssh',
      '/home/u/.SSH',
      '/data/u/.aws',
      '/home/other/.aws/credentials',
      '/root/.ssh',
      '/etc/shadow',
      '/proc/1/environ',
      '/home/u/.sshx',
      '/home/u/ssh',
      '/etc/shadowy',
      '/tmp/.ssh-notes',
    ),
    fc.array(segment, { maxLength: 2 }),
  )
  .map(([base, tail]) => [base, ...tail].join('/'));
const key = fc.oneof(randomKey, nearKey);

describe('the sensitive-path matcher with and without its union', () => {
  it('gives the same first rule for every key before and after the union is built', () => {
    const warm = compileRules(rules, anchors);
    for (let i = 0; i <= UNION_AFTER; i++) warm.match(['/warm/up']);
    // The reference never reaches the threshold: it is replaced before its UNION_AFTER-th use.
    let reference = compileRules(rules, anchors);
    let uses = 0;
    const byRule = (keys: readonly string[]): string | null => {
      if (++uses >= UNION_AFTER) {
        reference = compileRules(rules, anchors);
        uses = 1;
      }
      return reference.match(keys);
    };
    let matched = 0;
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 3 }), (keys) => {
        const want = byRule(keys);
        if (want !== null) matched++;
        expect(warm.match(keys)).toBe(want);
      }),
      { numRuns: runs(400) },
    );
    // Not only misses: some keys hit a rule.
    expect(matched).toBeGreaterThan(40);
  });

  it('matches the obvious cases either way', () => {
    const m = compileRules(rules, anchors);
    const answers = (): (string | null)[] =>
      [['/home/u/.ssh/id_rsa'], ['/data/u/.aws/credentials'], ['/home/u/notes.txt'], ['/etc/shadow']].map(
        (k) => m.match(k),
      );
    const before = answers();
    expect(before[0]).not.toBeNull();
    expect(before[1]).not.toBeNull();
    expect(before[2]).toBeNull();
    for (let i = 0; i <= UNION_AFTER; i++) m.match(['/warm/up']);
    expect(answers()).toEqual(before);
  });
});
