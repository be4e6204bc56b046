import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, createPolicyEnvironment, parseConfig, runPolicyTests } from '../../runtime/index.ts';
import { policyTestCommand } from '../../surfaces/cli/policy-test.ts';

const dir = mkdtempSync(join(tmpdir(), 'snotra-policy-examples-'));
mkdirSync(join(dir, 'project'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const noSandbox = () => ({ name: 'none' as const, reason: 'test' });

function config(rules: unknown[]): string {
  return JSON.stringify({
    stateDir: 'state',
    workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
    agents: { assistant: { mode: 'ask', rules } },
  });
}
const load = (rules: unknown[]) => parseConfig(config(rules), join(dir, 'snotra.config.json'), dir);

/** The ConfigError problems of loading `rules` (parse, then the boot-time command examples). */
async function problemsOf(rules: unknown[]): Promise<string[]> {
  try {
    await createPolicyEnvironment(load(rules), { detectSandbox: noSandbox });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return [...err.problems];
  }
}

const pushRule = {
  id: 'no-push',
  command: 'git push',
  effect: 'deny',
  examples: {
    match: [
      'git push',
      'git push origin main',
      '/usr/bin/git push',
      'sudo git push -f',
      'git -C repo push',
      "bash -c 'git push'",
    ],
    notMatch: ['git pushx', 'git status', 'echo git push', 'git log --grep push'],
  },
};
const pathRule = {
  id: 'migrations',
  path: 'migrations/**',
  access: 'write',
  effect: 'ask',
  examples: {
    match: ['migrations/001.sql', './migrations/a/b.sql'],
    notMatch: ['src/migrations.ts', 'migrationsx/a.sql'],
  },
};
const targetRule = {
  id: 'prod-api',
  target: '*.prod.example.com',
  effect: 'deny',
  examples: {
    match: ['https://api.prod.example.com/v1', 'HTTPS://API.PROD.EXAMPLE.COM./x'],
    notMatch: ['https://prod.example.com.evil.test/', 'https://api.staging.example.com/'],
  },
};

describe('policy tests: rules carry examples of what they match', () => {
  it('a config whose rules behave as their examples say loads, and every example passes', async () => {
    const loaded = load([pushRule, pathRule, targetRule]);
    const env = await createPolicyEnvironment(loaded, { detectSandbox: noSandbox });
    const rows = runPolicyTests(loaded.config, env.shell.commands?.bind(env.shell) ?? null);
    expect(rows.filter((r) => !r.ok)).toEqual([]);
    expect(rows).toHaveLength(6 + 4 + 2 + 2 + 2 + 2);
  });

  it('a rule that matches one of its notMatch examples refuses to load, naming the rule and the example', async () => {
    expect(() => load([{ ...pathRule, examples: { notMatch: ['migrations/002.sql'] } }])).toThrow(
      ConfigError,
    );
    const problems = await problemsOf([{ ...pushRule, examples: { notMatch: ['git push --force'] } }]);
    expect(problems).toEqual([
      'agents.assistant.rules[0].examples.notMatch: rule "no-push" matches it: "git push --force" (the command example must not match)',
    ]);
  });

  it('a rule that misses one of its match examples refuses to load, for each kind of matcher', async () => {
    for (const [rule, example] of [
      [
        { ...targetRule, examples: { match: ['https://prod.example.com.evil.test/'] } },
        'prod.example.com.evil.test',
      ],
      [{ ...pathRule, examples: { match: ['src/a.ts'] } }, 'src/a.ts'],
      [{ ...pushRule, examples: { match: ['git status'] } }, 'git status'],
    ] as const) {
      const problems = await problemsOf([rule]);
      expect(problems.join('\n'), rule.id).toContain(`rule ${JSON.stringify(rule.id)} does not match it`);
      expect(problems.join('\n')).toContain(example);
    }
  });

  it('a possible match (a word only known at run time) satisfies neither kind of example', async () => {
    const problems = await problemsOf([
      { ...pushRule, examples: { match: ['git $CMD'], notMatch: ['$(echo git) push'] } },
    ]);
    expect(problems).toHaveLength(2);
    expect(problems.every((p) => p.includes('may match it'))).toBe(true);
  });

  it('examples need a rule with exactly one argument matcher', () => {
    expect(() => load([{ id: 'x', tool: 'shell', effect: 'ask', examples: { match: ['ls'] } }])).toThrow(
      /"examples" go with a rule that has exactly one of/,
    );
  });

  it('snotra policy test prints a table and exits 1 when an example fails (the config is read, not refused)', async () => {
    const file = join(dir, 'proposed.json');
    writeFileSync(
      file,
      config([pushRule, { ...targetRule, examples: { notMatch: ['https://db.prod.example.com'] } }]),
    );
    let out = '';
    const io = {
      stdout: (s: string) => void (out += s),
      stderr: (s: string) => void (out += s),
      stdinLines: async function* () {},
    };
    expect(await policyTestCommand(['--config', file], io, dir)).toBe(1);
    expect(out).toMatch(
      /assistant +prod-api +target +notMatch +yes +FAIL +"https:\/\/db\.prod\.example\.com"/,
    );
    expect(out).toContain('10 passed, 1 failed');
    out = '';
    writeFileSync(file, config([pushRule]));
    expect(await policyTestCommand(['--config', file, '--json'], io, dir)).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ passed: 10, failed: 0 });
  });
});
