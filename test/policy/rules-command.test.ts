import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import type { Decision } from '../../policy/decision.ts';
import type { ToolRule } from '../../policy/rules.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { runs } from '../support/laws.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
});
afterAll(() => ws.cleanup());

const DENY_PUSH: ToolRule[] = [{ id: 'no-push', command: 'git push', effect: 'deny' }];
const ASK_PUBLISH: ToolRule[] = [{ id: 'ask-publish', command: 'npm publish', effect: 'ask' }];

function shell(command: string, rules: ToolRule[], mode: 'allow' | 'ask' = 'allow'): Decision {
  return evaluate({ tool: 'shell', args: { command } }, ws.context({ mode, rules }));
}

describe('a command rule matches the analyzed simple commands, not the raw string', () => {
  const evasions = [
    'git push',
    'git push origin main',
    'git  push',
    'git\tpush',
    '/usr/bin/git push',
    '\\git push',
    'g""it push',
    "'git' push",
    'GIT push',
    'command git push',
    'builtin command git push',
    'sudo git push',
    'sudo -u root git push',
    'doas git push',
    'env git push',
    'env -i PATH=/usr/bin git push',
    'FOO=1 git push origin',
    'FOO=1 BAR=2 command git push',
    'nice -n 5 git push',
    'timeout 5 git push',
    'nohup git push',
    'time git push',
    'exec git push',
    'git -C x push',
    'git -C x -c user.name=y push',
    'git --no-pager push',
    'git --git-dir=.git --work-tree=. push',
    'git push -u origin main',
    'git-push origin',
    '/usr/lib/git-core/git-push origin',
    'ls && git push',
    'ls; git push',
    'false || git push',
    'ls | git push',
    'git push &',
    '(git push)',
    '{ git push; }',
    'echo $(git push)',
    'echo `git push`',
    'x=$(git push)',
    'if true; then git push; fi',
    'for i in 1; do git push; done',
    'f() { git push; }; f',
    "sh -c 'git push'",
    'bash -c "git push origin"',
    "bash -c 'sudo git push'",
    "eval 'git push'",
    "echo 'git push' | sh",
    'bash <<< "git push"',
    'find . -maxdepth 0 -exec git push \\;',
    'xargs git push < /dev/null',
    'cat <<EOF\n$(git push)\nEOF',
    'git -c core.pager="git push" log',
    "PAGER='git push' man ls",
    "alias g='git push'",
    'git.exe push',
    'C:\\Git\\bin\\GIT.EXE push',
    'exec -a x git push',
    'command -p git push',
    'echo push | xargs git',
    'echo push | xargs -n1 git',
  ];
  for (const command of evasions) {
    it(`denies ${JSON.stringify(command)}`, () => {
      const d = shell(command, DENY_PUSH);
      expect({ decision: d.decision, reason: d.reason, rule: d.rule }).toEqual({
        decision: 'deny',
        reason: 'tool_rule_deny',
        rule: { id: 'no-push', source: 'tool-rule' },
      });
      expect(d.step).toBe(6);
      expect(d.detail).toBe('the call matches command "git push"');
    });
  }

  const lookalikes = [
    'git status',
    'git log --grep push',
    'git commit -m push',
    'git commit -m "git push"',
    'git pushx',
    'git stash push',
    'git config --get push.default',
    'echo git push',
    'echo "git push"',
    'printf "git push\\n"',
    'gitk',
    'gitk push',
    'legit push',
    'git',
    'cat push',
    '# git push',
    "grep -r 'git push' .",
    "cat <<'EOF'\ngit push\nEOF",
    'cat <<EOF\ngit push\nEOF',
    'git status # git push',
  ];
  for (const command of lookalikes) {
    it(`does not match the look-alike ${JSON.stringify(command)}`, () => {
      const d = shell(command, DENY_PUSH);
      expect(d.reason).not.toBe('tool_rule_deny');
      expect(d.decision).toBe('allow');
    });
  }
});

describe('a command rule that cannot be sure asks a human, even when it would deny', () => {
  for (const command of ['git "$sub"', 'git $(echo push)', 'git "$x" status']) {
    it(`${JSON.stringify(command)} (a run-time subcommand) needs a human: the analyzer cannot follow it`, () => {
      const d = shell(command, DENY_PUSH);
      expect({ decision: d.decision, reason: d.reason }).toEqual({
        decision: 'approval-required',
        reason: 'unanalyzable_command',
      });
    });
  }

  for (const command of ['git pu?h', 'git push*', 'sudo git p[u]sh origin']) {
    it(`${JSON.stringify(command)} (a glob that may expand to "push") makes the deny rule ask`, () => {
      const d = shell(command, DENY_PUSH);
      expect(d).toMatchObject({
        decision: 'approval-required',
        reason: 'tool_rule_ask',
        rule: { id: 'no-push', source: 'tool-rule' },
      });
      expect(d.detail).toMatch(/^the call may match command "git push" .*; a deny rule asks instead$/);
    });
  }

  for (const command of ['sudo -u "$u" git push', 'git -C "$d" push', 'cd "$d" && git push']) {
    it(`${JSON.stringify(command)} (run-time words outside the compared ones) is still denied`, () => {
      expect(shell(command, DENY_PUSH).reason).toBe('tool_rule_deny');
    });
  }

  it('code a shell reads from a here-document is never allowed', () => {
    expect(shell("bash <<'EOF'\ngit push\nEOF", DENY_PUSH).decision).toBe('approval-required');
  });

  it('an analyzer that cannot list commands makes every command rule a possible match', () => {
    const base = ws.context({ mode: 'allow', rules: DENY_PUSH });
    const analyze = base.shell.analyze.bind(base.shell);
    const ctx = { ...base, shell: { analyze } };
    const d = evaluate({ tool: 'shell', args: { command: 'ls' } }, ctx);
    expect(d).toMatchObject({
      decision: 'approval-required',
      reason: 'tool_rule_ask',
      rule: { id: 'no-push' },
    });
  });
});

describe('command rules narrow only', () => {
  it('an ask rule asks in allow mode, and in ask mode the mode asks first', () => {
    expect(shell('npm publish --tag next', ASK_PUBLISH)).toMatchObject({
      decision: 'approval-required',
      reason: 'tool_rule_ask',
      rule: { id: 'ask-publish', source: 'tool-rule' },
      detail: 'the call matches command "npm publish"',
    });
    expect(shell('npm --registry https://r.example publish', ASK_PUBLISH).reason).toBe('tool_rule_ask');
    expect(shell('npm test', ASK_PUBLISH).decision).toBe('allow');
    expect(shell('npm publish', ASK_PUBLISH, 'ask').decision).toBe('approval-required');
  });

  it('a program-only rule matches every use of the program and none of its look-alikes', () => {
    const rules: ToolRule[] = [{ id: 'no-curl', command: 'curl', effect: 'deny' }];
    expect(shell('curl https://example.com', rules).reason).toBe('tool_rule_deny');
    expect(shell('sudo /usr/bin/curl -s x', rules).reason).toBe('tool_rule_deny');
    expect(shell('CURL.exe x', rules).reason).toBe('tool_rule_deny');
    expect(shell('echo curl', rules).decision).toBe('allow');
    expect(shell('curlie x', rules).decision).toBe('allow');
  });

  it('a hardline command stays a hardline denial, and an unanalyzable one keeps its reason', () => {
    expect(shell('git push --force', DENY_PUSH).reason).toBe('hardline_command');
    expect(shell('eval "$x"', ASK_PUBLISH).reason).toBe('unanalyzable_command');
  });

  it('a command rule never applies to other tools', () => {
    const d = evaluate(
      { tool: 'read_file', args: { path: 'README.md' } },
      ws.context({ mode: 'allow', rules: [{ id: 'no-cat', command: 'cat', effect: 'deny' }] }),
    );
    expect(d.reason).toBe('mode_allow');
  });
});

describe('wrapper and option spellings never get around a command rule (property)', () => {
  const wrapper = fc.constantFrom(
    '',
    'sudo ',
    'sudo -u root ',
    'doas ',
    'command ',
    'env ',
    'env FOO=1 ',
    'FOO=1 ',
    'nice -n 5 ',
    'timeout 5 ',
    'nohup ',
    'time ',
    'exec ',
    'stdbuf -o0 ',
    'setsid ',
  );
  const program = fc.constantFrom('git', '/usr/bin/git', '\\git', '"git"', 'g""it');
  const globalOption = fc.constantFrom(
    '-C x',
    '--no-pager',
    '-c user.name=y',
    '--git-dir=.git',
    '-P',
    '--bare',
  );
  const tail = fc.constantFrom('', ' origin', ' -u origin main', ' --tags', ' origin HEAD:refs/heads/x');
  const quoting = fc.constantFrom<(c: string) => string>(
    (c) => c,
    (c) => `sh -c '${c}'`,
    (c) => `bash -c "${c.replace(/"/g, '\\"')}"`,
    (c) => `eval '${c}'`,
    (c) => `ls && ${c}`,
    (c) => `echo "$(${c})"`,
  );
  it('every composition of git push is denied by the rule', () => {
    fc.assert(
      fc.property(
        fc.array(wrapper, { maxLength: 3 }),
        program,
        fc.array(globalOption, { maxLength: 3 }),
        tail,
        quoting,
        (wrappers, prog, options, rest, wrap) => {
          const command = wrap(`${wrappers.join('')}${[prog, ...options].join(' ')} push${rest}`);
          const d = shell(command, DENY_PUSH);
          expect(d.decision, command).toBe('deny');
          expect(['tool_rule_deny', 'hardline_command'], command).toContain(d.reason);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('the same compositions around other subcommands are never denied by the rule', () => {
    fc.assert(
      fc.property(
        fc.array(wrapper, { maxLength: 3 }),
        program,
        fc.array(globalOption, { maxLength: 3 }),
        fc.constantFrom('status', 'log --grep push', 'pushx', 'commit -m push', 'stash push'),
        quoting,
        (wrappers, prog, options, sub, wrap) => {
          const command = wrap(`${wrappers.join('')}${[prog, ...options].join(' ')} ${sub}`);
          expect(shell(command, DENY_PUSH).reason, command).not.toBe('tool_rule_deny');
        },
      ),
      { numRuns: runs(300) },
    );
  });
});
