import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config/load.ts';
import {
  chooseSecretBackend,
  openKeyringStore,
  type KeyringEntryFactory,
} from '../../runtime/secrets/index.ts';
import { initCommand } from '../../surfaces/cli/init.ts';
import { runCli } from '../../surfaces/cli/main.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-init-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/** A fresh folder; a real git work tree when `git` is true. */
function folder(git: boolean): string {
  const dir = join(base, `f${n++}`);
  mkdirSync(dir);
  if (git) execFileSync('git', ['init', '-q', dir]);
  return dir;
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      stdout: (t: string) => void out.push(t),
      stderr: (t: string) => void err.push(t),
      stdinLines: async function* () {},
    },
  };
}

/** Env whose default state dir lies under `stateHome`. */
const envAt = (stateHome: string) => ({ HOME: base, XDG_STATE_HOME: stateHome });

describe('snotra init', () => {
  it('writes a starter that loads as written, with a $schema that resolves to the shipped schema', async () => {
    const dir = folder(true);
    const r = io();
    expect(await runCli(['init', '--state-dir', '.snotra-state'], r.io, dir)).toBe(0);
    const file = join(dir, 'snotra.config.json');
    expect(r.out[0]).toBe(`wrote ${file}\n`);
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(typeof raw.$comment).toBe('string');
    const schemaFile = resolve(dir, raw.$schema as string);
    expect(readFileSync(schemaFile, 'utf8')).toBe(
      readFileSync(new URL('../../schema/snotra.config.schema.json', import.meta.url), 'utf8'),
    );
    const loaded = loadConfig(file, { env: envAt(join(base, 'state')) });
    expect(loaded.config.stateDir).toBe(join(dir, '.snotra-state'));
    expect(loaded.config.agents.assistant?.mode).toBe('ask');
    expect(loaded.config.workspace.roots[0]).toMatchObject({ path: dir, access: 'read-write' });
    // The policy checker takes it as written.
    writeFileSync(join(dir, 'notes.txt'), 'hi');
    const p = io();
    expect(
      await runCli(['policy', 'check', '--tool', 'read_file', '--args', '{"path":"notes.txt"}'], p.io, dir),
    ).toBe(0);
    expect(p.out.join('')).toMatch(/^allow/);
  });

  it("adds the state dir to the work tree's .gitignore (created when missing), once", async () => {
    const dir = folder(true);
    expect(await runCli(['init', '--state-dir', '.snotra-state'], io().io, dir)).toBe(0);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(
      '# Snotra Runtime state dir (snotra init)\n/.snotra-state/\n',
    );
    // git itself now ignores the state dir.
    mkdirSync(join(dir, '.snotra-state'), { recursive: true });
    writeFileSync(join(dir, '.snotra-state', 'store.db'), '');
    expect(execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' })).not.toContain(
      '.snotra-state',
    );
    const again = io();
    expect(await runCli(['init', '--force', '--state-dir', '.snotra-state'], again.io, dir)).toBe(0);
    expect(again.out.join('')).toContain('already lists /.snotra-state/');
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').match(/snotra-state/g)).toHaveLength(1);
  });

  it('appends to an existing .gitignore (no trailing newline), keeping it, with a path relative to the work tree', async () => {
    const dir = folder(true);
    writeFileSync(join(dir, '.gitignore'), 'node_modules\n*.log');
    const sub = join(dir, 'app');
    mkdirSync(sub);
    expect(await runCli(['init', '--state-dir', 'var/state'], io().io, sub)).toBe(0);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(
      'node_modules\n*.log\n# Snotra Runtime state dir (snotra init)\n/app/var/state/\n',
    );
  });

  it('does not duplicate an existing line in another spelling', async () => {
    for (const spelling of ['.snotra-state', '.snotra-state/', '/.snotra-state', '  /.snotra-state/  ']) {
      const dir = folder(true);
      writeFileSync(join(dir, '.gitignore'), `dist\n${spelling}\n`);
      expect(await runCli(['init', '--state-dir', '.snotra-state'], io().io, dir)).toBe(0);
      expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(`dist\n${spelling}\n`);
    }
    // A look-alike line is not the state dir.
    const dir = folder(true);
    writeFileSync(join(dir, '.gitignore'), '.snotra-state-old/\n');
    expect(await runCli(['init', '--state-dir', '.snotra-state'], io().io, dir)).toBe(0);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toContain('\n/.snotra-state/\n');
  });

  it('the default state dir: ignored when it lies inside a work tree, .gitignore untouched when outside', async () => {
    const repo = folder(true);
    const work = join(repo, 'w');
    mkdirSync(work);
    const inside = io();
    expect(await initCommand([], inside.io, work, envAt(join(repo, '.state')))).toBe(0);
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toMatch(/^\/\.state\/snotra\/w-[0-9a-f]{12}\/$/m);
    expect(JSON.parse(readFileSync(join(work, 'snotra.config.json'), 'utf8'))).not.toHaveProperty('stateDir');

    const gitWork = folder(true);
    const outside = io();
    expect(await initCommand([], outside.io, gitWork, envAt(join(base, 'elsewhere')))).toBe(0);
    expect(existsSync(join(gitWork, '.gitignore'))).toBe(false);
    expect(outside.out.join('')).toContain('outside any git work tree');

    const plain = folder(false);
    expect(await initCommand(['--state-dir', 'state'], io().io, plain, envAt(join(base, 's')))).toBe(0);
    expect(existsSync(join(plain, '.gitignore'))).toBe(false);
  });

  it('names the OS keyring where one answers its probe, and env otherwise (a headless machine), and says which and why', async () => {
    // The real probe (write, read back, delete) over an entry factory: one keyring that keeps
    // what it is given, one that refuses as a machine without a Secret Service does.
    const kept = new Map<string, string>();
    const answering: KeyringEntryFactory = (service, account) => ({
      getPassword: async () => kept.get(`${service}/${account}`),
      setPassword: async (p) => void kept.set(`${service}/${account}`, p),
      deleteCredential: async () => kept.delete(`${service}/${account}`),
    });
    const refusing: KeyringEntryFactory = () => ({
      getPassword: async () => null,
      setPassword: async () => {
        throw new Error('Platform secure storage failure: DBus error\nsecond line');
      },
      deleteCredential: async () => false,
    });
    // A keyring that takes the probe but gives back something else does not answer either.
    const forgetful: KeyringEntryFactory = () => ({
      getPassword: async () => 'not what was written',
      setPassword: async () => {},
      deleteCredential: async () => true,
    });
    for (const [factory, backend, why] of [
      [answering, 'os', 'the OS keyring answered a probe (an entry written, read back and deleted)'],
      [refusing, 'env', 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)'],
      [forgetful, 'env', 'the probe entry did not read back'],
    ] as const) {
      const dir = folder(false);
      const r = io();
      const choose = () =>
        chooseSecretBackend(() => openKeyringStore({ factory, platform: 'linux', env: {} }));
      expect(await initCommand(['--state-dir', 'state'], r.io, dir, envAt(join(base, 's')), choose)).toBe(0);
      const raw = JSON.parse(readFileSync(join(dir, 'snotra.config.json'), 'utf8')) as { secrets: unknown };
      expect(raw.secrets).toEqual({ backend });
      const said =
        r.out
          .join('')
          .split('\n')
          .find((l) => l.startsWith('secrets: ')) ?? '';
      expect(said).toContain(
        backend === 'os'
          ? 'the OS keyring (secrets.backend "os")'
          : 'no OS keyring answers here, so secrets.backend is "env"',
      );
      expect(said).toContain(why);
      expect(said).not.toContain('second line');
    }
    expect(kept.size).toBe(0);
  });

  it('refuses to overwrite an existing config without --force (exit 1, file unchanged)', async () => {
    const dir = folder(false);
    const file = join(dir, 'snotra.config.json');
    writeFileSync(file, '{"agents":{}}');
    const r = io();
    expect(await runCli(['init'], r.io, dir)).toBe(1);
    expect(r.err.join('')).toBe(
      `snotra init: ${file} already exists; not overwritten (use --force to replace it)\n`,
    );
    expect(readFileSync(file, 'utf8')).toBe('{"agents":{}}');
    expect(await runCli(['init', '--force'], io().io, dir)).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('"$schema"');
  });

  it('--config F writes elsewhere; a missing folder, a bad --state-dir or a bad flag write nothing', async () => {
    const dir = folder(false);
    mkdirSync(join(dir, 'conf'));
    expect(await runCli(['init', '--config', 'conf/my.json'], io().io, dir)).toBe(0);
    expect(
      loadConfig(join(dir, 'conf', 'my.json'), { env: envAt(join(base, 's2')) }).config.workspace.roots[0]
        ?.path,
    ).toBe(join(dir, 'conf'));

    const missing = io();
    expect(await runCli(['init', '--config', 'nope/c.json'], missing.io, dir)).toBe(1);
    expect(missing.err.join('')).toContain(`${join(dir, 'nope')}: no such folder`);

    const bad = io();
    expect(await runCli(['init', '--state-dir', 'a\u0000b'], bad.io, dir)).toBe(1);
    expect(bad.err.join('')).toContain('stateDir: a path must not contain NUL or other control characters');
    expect(existsSync(join(dir, 'snotra.config.json'))).toBe(false);

    const usage = io();
    expect(await runCli(['init', '--forse'], usage.io, dir)).toBe(2);
    expect(usage.err.join('')).toMatch(/--forse[\s\S]*usage: snotra init/);
    expect(existsSync(join(dir, 'snotra.config.json'))).toBe(false);
  });
});
