import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Decision } from '../../policy/decision.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-cli-')));
mkdirSync(join(dir, 'project'));
const configFile = join(dir, 'snotra.config.json');
writeFileSync(
  configFile,
  JSON.stringify({
    workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
    agents: { assistant: { mode: 'ask' }, bot: { mode: 'allow', tools: ['read_file'] } },
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function snotra(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    input,
    encoding: 'utf8',
    cwd: dir,
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('snotra policy check', () => {
  it('--stdin --json answers one line per input line, in order, and goes on after bad lines', () => {
    const input = [
      '{"tool":"read_file","args":{"path":"a.txt"}}',
      'this is not json',
      '{"tool":"shell","args":{"command":"rm -rf /"}}',
      '[1,2]',
      '{"tool":"write_file","args":{"path":"a.txt","content":"x"}}',
      '{"tool":"read_file","args":{"path":"a.txt"},"agent":"nobody"}',
      '{"tool":"shell","args":{"command":"ls"},"agent":"bot"}',
      '{"args":{}}',
      '{"tool":"nope","args":{}}',
    ].join('\n');
    const r = snotra(['policy', 'check', '--config', configFile, '--stdin', '--json'], `${input}\n`);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(9);
    expect(lines[0]).toMatchObject({ decision: 'allow', reason: 'mode_allow' });
    expect(lines[1]).toEqual({
      error: { code: 'invalid_json', message: expect.stringMatching(/^line 2: not valid JSON/) },
    });
    expect(lines[2]).toMatchObject({ decision: 'deny', reason: 'hardline_command' });
    expect(lines[3]).toEqual({ error: { code: 'invalid_line', message: expect.stringMatching(/^line 4:/) } });
    expect(lines[4]).toMatchObject({ decision: 'approval-required', reason: 'mode_ask' });
    expect(lines[5]).toEqual({ error: { code: 'unknown_agent', message: 'line 6: unknown agent "nobody"' } });
    expect(lines[6]).toMatchObject({ decision: 'deny', reason: 'tool_not_granted' });
    expect(lines[7]).toEqual({ error: { code: 'invalid_line', message: 'line 8: "tool" must be a string' } });
    expect(lines[8]).toMatchObject({ decision: 'deny', reason: 'tool_not_found' });
    for (const l of lines) if (!('error' in l)) expect(Decision.safeParse(l).success).toBe(true);
    expect(r.status).toBe(1);
  });

  it('--tool --args explains the decision in words and exits by decision', () => {
    const ask = snotra([
      'policy',
      'check',
      '--config',
      configFile,
      '--tool',
      'write_file',
      '--args',
      '{"path":"src/x.ts","content":""}',
    ]);
    expect(ask.status).toBe(10);
    expect(ask.stdout).toContain('approval-required: write_file (write-local)');
    expect(ask.stdout).toContain('decided at step 5 (global mode) by rule mode.ask [mode]');
    expect(ask.stdout).toContain(
      `target path: "src/x.ts" → ${dir}/project/src/x.ts (root project, read-write)`,
    );

    const allow = snotra([
      'policy',
      'check',
      '--config',
      configFile,
      '--agent',
      'bot',
      '--tool',
      'read_file',
      '--args',
      '{"path":"x"}',
      '--json',
    ]);
    expect(allow.status).toBe(0);
    expect(JSON.parse(allow.stdout)).toMatchObject({ decision: 'allow' });

    const deny = snotra([
      'policy',
      'check',
      '--config',
      configFile,
      '--tool',
      'read_file',
      '--args',
      '{"path":"/etc/shadow"}',
    ]);
    expect(deny.status).toBe(11);
    expect(deny.stdout).toContain('reason: sensitive_path');
  });

  it('usage and config errors say what was wrong', () => {
    const both = snotra(['policy', 'check', '--config', configFile, '--stdin', '--tool', 'x']);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('give exactly one of --tool or --stdin');
    const badArgs = snotra(['policy', 'check', '--config', configFile, '--tool', 'x', '--args', '{']);
    expect(badArgs.status).toBe(2);
    expect(badArgs.stderr).toContain('--args is not valid JSON');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"agents":{"assistant":{"mode":"yolo"}}}');
    const cfg = snotra(['policy', 'check', '--config', bad, '--tool', 'read_file', '--args', '{"path":"x"}']);
    expect(cfg.status).toBe(1);
    expect(cfg.stderr).toContain('agents.assistant.mode: expected "allow" | "ask" | "deny", got "yolo"');
    const unknown = snotra(['frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });
});
