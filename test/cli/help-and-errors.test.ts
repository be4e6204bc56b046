import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, Redactor, resolveDbPath } from '../../store/index.ts';
import { COMMAND_SPECS, GROUPS } from '../../surfaces/cli/commands.ts';
import { runCliInProcess, type CliResult } from '../support/cli-in-process.ts';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-help-')));
const configFile = join(dir, 'snotra.config.json');
const configState = join(dir, 'state');
const otherState = join(dir, 'other');
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function cli(argv: string[]): Promise<CliResult> {
  return runCliInProcess(argv, dir);
}

function seed(stateDir: string, runId: string): void {
  const store = openStore({ path: resolveDbPath({ stateDir }), redactor: new Redactor() });
  try {
    store.snapshots.put({
      runId,
      agentId: 'assistant',
      surface: 'chat',
      status: 'completed',
      snapshot: { status: 'done', context: { runId } },
    });
    store.audit.append({ kind: 'proposed', runId, callId: 'c1', tool: 'read_file' });
  } finally {
    store.close();
  }
}

beforeAll(() => {
  writeFileSync(configFile, JSON.stringify({ stateDir: 'state', agents: { assistant: { mode: 'ask' } } }));
  seed(configState, 'assistant:run-config');
  seed(otherState, 'assistant:run-other');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('help on every command', () => {
  it.each(COMMAND_SPECS.map((s) => [s.path.join(' ')]))(
    'snotra %s --help: exit 0, usage with its flags and an example',
    async (path) => {
      const r = await cli([...path.split(' '), '--help']);
      expect(r.code).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toContain(`Usage: snotra ${path}`);
      expect(r.out).toContain('-h, --help');
      expect(r.out).toMatch(new RegExp(`Examples:\\n {2}\\$ snotra ${path}`));
      // -h and `help PATH` say the same.
      expect((await cli([...path.split(' '), '-h'])).out).toBe(r.out);
      expect(await cli(['help', ...path.split(' ')])).toEqual(r);
    },
  );

  it.each(Object.keys(GROUPS).map((g) => [g]))('snotra %s --help lists its subcommands', async (group) => {
    const r = await cli([group, '--help']);
    expect(r.code).toBe(0);
    for (const s of COMMAND_SPECS.filter((c) => c.path[0] === group))
      expect(r.out).toContain(`  ${s.path[1] as string} `);
    expect(r.out).toContain(`$ snotra ${group} `);
  });

  it.each([[['--help']], [['-h']], [['help']]])(
    'snotra %j: the command list, examples and exit codes',
    async (argv) => {
      const r = await cli(argv);
      expect(r.code).toBe(0);
      for (const name of [
        'start',
        'run',
        'demo',
        'policy',
        'inbox',
        'runs',
        'tasks',
        'grants',
        'audit',
        'doctor',
        'viz',
      ])
        expect(r.out).toMatch(new RegExp(`\\n {2}${name} `));
      expect(r.out).toContain('Examples:');
      expect(r.out).toContain('Exit codes (every command):');
    },
  );

  it.each([[['--version']], [['-V']]])('snotra %j prints package.json’s version', async (argv) => {
    expect(await cli(argv)).toEqual({ code: 0, out: `${VERSION}\n`, err: '' });
  });
});

describe('usage errors', () => {
  it('a typo’d command exits 2 with a suggestion', async () => {
    const r = await cli(['strat']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown command "strat"; did you mean "start"?');
    const sub = await cli(['inbox', 'aprove', 'x']);
    expect(sub.code).toBe(2);
    expect(sub.err).toContain('unknown command "aprove"; did you mean "approve"?');
    const help = await cli(['help', 'tsaks']);
    expect(help.code).toBe(2);
    expect(help.err).toContain('did you mean "tasks"?');
  });

  it('a name far from every command gets no guess', async () => {
    const r = await cli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown command "frobnicate"; commands: start,');
    expect(r.err).not.toContain('did you mean');
  });

  it.each([
    [['runs', 'list', '--jsno'], '"--json"'],
    [['inbox', 'approve', 'x', '--reasn', 'r'], '"--reason"'],
    [['tasks', '--limt', '3'], '"--limit"'],
    [['audit', '--verfy'], '"--verify"'],
    [['policy', 'show', '--state-dri', 'x'], '"--state-dir"'],
    [['start', '--log-levl', 'info'], '"--log-level"'],
  ])('a typo’d flag %j exits 2 with a suggestion', async (argv, meant) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`did you mean ${meant}?`);
  });

  it('after `--`, --help is an argument, not a request for help', async () => {
    const r = await cli(['runs', 'show', '--state-dir', otherState, '--', '--help']);
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toContain('no run "--help"');
  });

  it('viz takes --json as --format json, and refuses it with another format', async () => {
    const json = await cli(['viz', '--json']);
    expect(json.code).toBe(0);
    expect(json.out).toBe((await cli(['viz', '--format', 'json'])).out);
    expect((JSON.parse(json.out) as { machine: string }).machine).toBe('run');
    const both = await cli(['viz', '--json', '--format', 'dot']);
    expect(both.code).toBe(2);
    expect(JSON.parse(both.out)).toEqual({
      error: { code: 'usage', message: expect.stringContaining('--format dot') },
    });
  });

  it('no command, or a group without its subcommand, is a usage error', async () => {
    expect((await cli([])).code).toBe(2);
    const r = await cli(['grants']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('a subcommand is needed; commands: list, revoke');
  });
});

describe('--json errors are JSON on stdout', () => {
  function errorOf(out: string): { code: string; message: string } {
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1);
    const value = JSON.parse(lines[0] as string) as { error: { code: string; message: string } };
    expect(Object.keys(value)).toEqual(['error']);
    expect(typeof value.error.message).toBe('string');
    return value.error;
  }

  it.each([
    [['runs', 'list', '--jsno', '--json'], 2, 'usage', 'did you mean "--json"?'],
    [['runs', 'show', '--json'], 2, 'usage', 'usage: snotra runs'],
    [['tasks', '--limit', '0', '--json'], 2, 'usage', '--limit'],
    [['grants', 'revoke', '--json'], 2, 'usage', 'needs one grant id'],
    [['inbox', 'show', '--json', '--state-dir', otherState], 2, 'usage', 'needs an approval id'],
    [['policy', 'check', '--json', '--config', configFile], 2, 'usage', 'exactly one of --tool or --stdin'],
    [['audit', '--bogus', '--json'], 2, 'usage', 'unknown argument "--bogus"'],
    [['audit', '--json', '--db', join(dir, 'missing', 'snotra.db')], 1, 'audit_unavailable', 'missing'],
    [['doctor', '--jsn', '--json'], 2, 'usage', 'did you mean "--json"?'],
  ])('%j exits %i with code %s', async (argv, exit, code, text) => {
    const r = await cli(argv);
    expect(r.code).toBe(exit);
    expect(r.err).toBe('');
    const e = errorOf(r.out);
    expect(e.code).toBe(code);
    expect(e.message).toContain(text);
  });

  it('an unknown id under --json is a not_found error (exit 1); plain text without', async () => {
    for (const argv of [
      ['runs', 'show', 'nope'],
      ['inbox', 'show', 'nope'],
    ]) {
      const r = await cli([...argv, '--json', '--state-dir', otherState]);
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.err).toBe('');
      expect(errorOf(r.out)).toEqual({ code: 'not_found', message: expect.stringContaining('"nope"') });
      const plain = await cli([...argv, '--state-dir', otherState]);
      expect(plain).toMatchObject({ code: 1, out: '' });
      expect(plain.err).toMatch(new RegExp(`^snotra ${argv[0] as string}: no (run|approval) "nope"\\n$`));
    }
  });

  it('a bad config under --json is an invalid_config error naming the file and path (exit 1)', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"agents":{"assistant":{"mode":"yolo"}}}');
    for (const argv of [
      ['runs', 'list'],
      ['inbox', 'list'],
      ['tasks'],
      ['grants', 'list'],
      ['policy', 'show'],
    ]) {
      const r = await cli([...argv, '--config', bad, '--json']);
      expect(r.code, argv.join(' ')).toBe(1);
      const e = errorOf(r.out);
      expect(e.code).toBe('invalid_config');
      expect(e.message).toContain(bad);
      expect(e.message).toContain('agents.assistant.mode');
    }
  });

  it('without --json the same errors stay plain text on stderr', async () => {
    const r = await cli(['runs', 'list', '--jsno']);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^snotra runs: Unknown option '--jsno'; did you mean "--json"\?/);
  });
});

describe('--config F and --state-dir D on every state command', () => {
  it('runs list: the config’s state dir, --state-dir, and --state-dir over --config', async () => {
    const ids = async (argv: string[]) => {
      const r = await cli(['runs', 'list', '--json', ...argv]);
      expect(r.code).toBe(0);
      return r.out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { runId: string }).runId);
    };
    expect(await ids(['--config', configFile])).toEqual(['assistant:run-config']);
    expect(await ids(['--state-dir', otherState])).toEqual(['assistant:run-other']);
    expect(await ids(['--config', configFile, '--state-dir', otherState])).toEqual(['assistant:run-other']);
  });

  it('audit: the same three ways', async () => {
    const runs = async (argv: string[]) => {
      const r = await cli(['audit', '--json', ...argv]);
      expect(r.code).toBe(0);
      return [
        ...new Set(
          r.out
            .trim()
            .split('\n')
            .map((l) => (JSON.parse(l) as { runId: string }).runId),
        ),
      ];
    };
    expect(await runs(['--config', configFile])).toEqual(['assistant:run-config']);
    expect(await runs(['--state-dir', otherState])).toEqual(['assistant:run-other']);
    expect(await runs(['--config', configFile, '--state-dir', otherState])).toEqual(['assistant:run-other']);
  });

  it('policy show names the state dir it read', async () => {
    const shown = async (argv: string[]) => {
      const r = await cli(['policy', 'show', '--json', ...argv]);
      expect(r.code).toBe(0);
      return (JSON.parse(r.out) as { stateDir: string }).stateDir;
    };
    expect(await shown(['--config', configFile])).toBe(configState);
    expect(await shown(['--config', configFile, '--state-dir', otherState])).toBe(otherState);
  });

  it.each([
    [['inbox', 'list']],
    [['tasks']],
    [['grants', 'list']],
    [['runs', 'show', 'assistant:run-other']],
  ])('%j takes both flags', async (argv) => {
    for (const flags of [
      ['--config', configFile],
      ['--state-dir', otherState],
      ['--config', configFile, '--state-dir', otherState],
    ]) {
      const r = await cli([...argv, ...flags]);
      expect(r.code === 0 || (argv[0] === 'runs' && flags.length === 2 && flags[0] === '--config')).toBe(
        true,
      );
      expect(r.err).not.toContain('Unknown option');
    }
  });
});
