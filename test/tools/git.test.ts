import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkGitArgs } from '../../actors/tools/git/git-args.ts';
import { createGitQueryExecutor } from '../../actors/tools/git/git-query.ts';
import type { ProcessRunner, ProcessRunRequest } from '../../actors/tools/process-runner.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createTestWorkspace, type TestWorkspace } from './support.ts';

let ws: TestWorkspace;
let supervisor: ProcessSupervisor;

beforeAll(() => {
  ws = createTestWorkspace();
  supervisor = new ProcessSupervisor({ killGraceMs: 500 });
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: ws.root,
      env: { PATH: process.env.PATH, HOME: ws.dir, GIT_CONFIG_NOSYSTEM: '1' },
      stdio: 'pipe',
    });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(ws.root, 'a.txt'), 'one\n');
  git('add', 'a.txt');
  git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'first commit');
  writeFileSync(join(ws.root, 'a.txt'), 'two\n');
  git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-am', 'second commit');
  writeFileSync(join(ws.root, 'a.txt'), 'three\n');
});
afterAll(async () => {
  await supervisor.shutdown();
  ws.cleanup();
});

function query(args: string[], runner: ProcessRunner = supervisor) {
  const call = { args };
  return createGitQueryExecutor({ runner }).execute(
    call,
    ws.context(ws.decide('git_query', call)),
  ) as Promise<{
    stdout: string;
  }>;
}

describe('git_query', () => {
  it('runs log --oneline in a temp repo', async () => {
    const { stdout } = await query(['log', '--oneline']);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^[0-9a-f]+ second commit$/);
  });

  it('runs status and diff', async () => {
    expect((await query(['status', '--porcelain'])).stdout).toBe(' M a.txt\n');
    expect((await query(['diff'])).stdout).toContain('+three');
  });

  it.each([
    [['log', '--output=x'], 'git_option_refused'],
    [['diff', '--output', 'x'], 'git_option_refused'],
    [['diff', '--ext-diff'], 'git_option_refused'],
    [['diff', '--ext-d'], 'git_option_refused'],
    [['log', '-c', 'core.pager=x'], 'git_option_refused'],
    [['log', '-ccore.pager=x'], 'git_option_refused'],
    [['show', '--textconv'], 'git_option_refused'],
    [['log', '--exec-path=/tmp'], 'git_option_refused'],
    [['log', '--git-dir=/elsewhere'], 'git_option_refused'],
    [['log', '--work-tree=/elsewhere'], 'git_option_refused'],
    [['log', '--upload-pack=evil'], 'git_option_refused'],
    [['show', '--open-files-in-pager'], 'git_option_refused'],
    [['log', '--config-env=core.pager=X'], 'git_option_refused'],
    [['diff', '--no-index', '/etc/hostname', 'a.txt'], 'git_option_refused'],
    [['diff', '-O/etc/passwd'], 'git_option_refused'],
    [['push'], 'git_subcommand_refused'],
    [['-c', 'core.pager=x', 'log'], 'git_subcommand_refused'],
    [['config', 'core.pager'], 'git_subcommand_refused'],
  ])('refuses %j before running anything', async (args, code) => {
    const started: ProcessRunRequest[] = [];
    const spy: ProcessRunner = {
      run: (request) => {
        started.push(request);
        return supervisor.run(request);
      },
    };
    await expect(query(args, spy)).rejects.toMatchObject({ code });
    expect(started).toEqual([]);
  });

  it('accepts harmless look-alikes', () => {
    for (const args of [
      ['log', '--oneline', '--no-ext-diff'],
      ['diff', '--no-textconv', '--stat'],
      ['diff', '--output-indicator-new=+'],
      ['log', '--format=%H %s', '-n', '5'],
      ['show', 'HEAD:a.txt'],
    ]) {
      expect(checkGitArgs(args)).toBeNull();
    }
  });

  it('runs git with no system/global config, no pager and safety options', async () => {
    const seen: ProcessRunRequest[] = [];
    const spy: ProcessRunner = {
      run: (request) => {
        seen.push(request);
        return supervisor.run(request);
      },
    };
    await query(['show', '--stat', 'HEAD'], spy);
    const request = seen[0];
    expect(request?.args.slice(0, 1)).toEqual(['--no-pager']);
    expect(request?.args).toContain('core.pager=cat');
    expect(request?.args).toContain('core.fsmonitor=false');
    expect(request?.args.slice(request.args.indexOf('show'), request.args.indexOf('show') + 3)).toEqual([
      'show',
      '--no-ext-diff',
      '--no-textconv',
    ]);
    const env = Object.fromEntries((request?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_OPTIONAL_LOCKS: '0',
    });
    expect(env.GIT_EXTERNAL_DIFF).toBeUndefined();
  });

  it('ignores an external diff planted in the parent environment', async () => {
    const marker = join(ws.dir, 'ext-diff-ran');
    process.env.GIT_EXTERNAL_DIFF = `sh -c 'touch ${marker}'`;
    try {
      await query(['diff']);
    } finally {
      delete process.env.GIT_EXTERNAL_DIFF;
    }
    expect(() => execFileSync('test', ['-e', marker])).toThrow();
  });
});
