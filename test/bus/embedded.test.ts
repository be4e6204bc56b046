import { jetstreamManager } from '@nats-io/jetstream';
import { connect, errors as natsErrors } from '@nats-io/transport-node';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BusError,
  connectBus,
  defineKinds,
  startEmbeddedNats,
  TOKEN_ENV,
  type BusLogger,
  type EmbeddedNats,
  type NatsExitInfo,
} from '../../runtime/bus/index.ts';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { resolveNatsBinary } from '../../runtime/bus/nats-binary.ts';
import { loadConfig } from '../../runtime/config/load.ts';
import { Runtime } from '../../runtime/runtime.ts';
import { isProcessAlive } from '../../runtime/bus/processes.ts';
import { eventually, livePidsInGroup, startTestNats, tempStateDir } from './helpers.ts';

const kinds = defineKinds({});

function recordingLogger(): BusLogger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (level: string) => (obj: object, msg: string) =>
    lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
  return { lines, debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') };
}

describe('embedded nats-server', () => {
  let nats: EmbeddedNats;
  let stateDir: string;
  let cleanup: () => Promise<void>;
  const logger = recordingLogger();
  const token = (): string => {
    const creds = nats.target().credentials;
    if (creds === undefined || !('token' in creds)) throw new Error('embedded target has no token');
    return creds.token;
  };

  beforeAll(async () => {
    process.env.SNOTRA_TEST_PARENT_SECRET = 'parent-secret-value';
    ({ nats, stateDir, cleanup } = await startTestNats({ logger }));
    delete process.env.SNOTRA_TEST_PARENT_SECRET;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('listens on a loopback port read from the ports file', () => {
    expect(nats.url).toBe(`nats://127.0.0.1:${nats.port}`);
    expect(nats.port).toBeGreaterThan(0);
    const ports = JSON.parse(
      readFileSync(join(stateDir, 'nats/run', `nats-server_${nats.pid}.ports`), 'utf8'),
    );
    expect(ports.nats).toEqual([nats.url]);
  });

  it('accepts a client with the token', async () => {
    const bus = await connectBus({ target: nats.target(), kinds, source: 'test' });
    await bus.flush();
    await bus.close();
  });

  it('refuses a client without a token or with a wrong token (AuthorizationError)', async () => {
    await expect(connect({ servers: nats.url, reconnect: false })).rejects.toBeInstanceOf(
      natsErrors.AuthorizationError,
    );
    await expect(
      connect({ servers: nats.url, token: `${token()}x`, reconnect: false }),
    ).rejects.toBeInstanceOf(natsErrors.AuthorizationError);
    const err = await connectBus({
      target: { url: nats.url, credentials: { token: 'snotra_wrong' } },
      kinds,
      source: 'test',
      reconnect: false,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('bus_auth_failed');
    expect((err as BusError).cause).toBeInstanceOf(natsErrors.AuthorizationError);
    expect(String((err as BusError).message)).not.toContain('snotra_wrong');
  });

  it("gives a slow client longer than nats-server's default 2 s to authenticate (a loaded desktop)", async () => {
    // A raw client that connects and only sends CONNECT 3 s later, as a runtime starting on a busy
    // machine may: the server's own default would have closed it with 'Authentication Timeout'.
    const socket = tcpConnect(nats.port, '127.0.0.1');
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('utf8')));
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      await new Promise((r) => setTimeout(r, 3_000));
      expect(received).not.toContain('-ERR');
      socket.write(`CONNECT ${JSON.stringify({ auth_token: token(), verbose: false })}\r\nPING\r\n`);
      await eventually(() => received.includes('PONG') || received.includes('-ERR'), 30_000);
      expect(received).toContain('PONG');
      expect(received).not.toContain('-ERR');
    } finally {
      socket.destroy();
    }
  });

  it('uses a 256-bit token that is never in argv, the config file or the logs', () => {
    const t = token();
    expect(t).toMatch(/^snotra_[0-9a-f]{64}$/);
    const cmdline = readFileSync(`/proc/${nats.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('-c');
    expect(cmdline).toContain('--ports_file_dir');
    expect(cmdline).not.toContain(t);
    for (const pid of livePidsInGroup(nats.pgid)) {
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(t);
    }
    const config = readFileSync(nats.configFile, 'utf8');
    expect(config).not.toContain(t);
    expect(config).toContain(`$${TOKEN_ENV}`);
    expect(config).toContain('listen: 127.0.0.1:-1');
    expect(statSync(nats.configFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'nats')).mode & 0o777).toBe(0o700);
    expect(logger.lines.join('\n')).not.toContain(t);
    expect(JSON.stringify(nats)).not.toContain(t);
  });

  it('gives the server only PATH/HOME/LANG/TMPDIR and the token as environment', () => {
    const env = readFileSync(`/proc/${nats.pid}/environ`, 'utf8').split('\0').filter(Boolean);
    const names = env.map((e) => e.slice(0, e.indexOf('=')));
    expect(names).toContain(TOKEN_ENV);
    for (const n of names) expect(['PATH', 'HOME', 'LANG', 'TMPDIR', TOKEN_ENV]).toContain(n);
    expect(env.join('\n')).not.toContain('parent-secret-value');
  });

  it('runs JetStream with its data under <stateDir>/nats/jetstream', async () => {
    expect(nats.jetstreamDir).toBe(join(stateDir, 'nats/jetstream'));
    const bus = await connectBus({ target: nats.target(), kinds, source: 'test' });
    const info = await (await jetstreamManager(bus.nats)).getAccountInfo();
    expect(info.limits).toBeDefined();
    await bus.close();
    expect(await eventually(() => existsSync(nats.jetstreamDir), 2000)).toBe(true);
  });
});

describe('embedded nats-server lifecycle', () => {
  it('stop() terminates the whole process group and resolves after exit', async () => {
    const exits: NatsExitInfo[] = [];
    const { nats, cleanup } = await startTestNats({ onExit: (i) => exits.push(i) });
    const pgid = nats.pgid;
    expect(livePidsInGroup(pgid)).toContain(nats.pid);
    const info = await nats.stop();
    expect(info.expected).toBe(true);
    expect(nats.running).toBe(false);
    expect(existsSync(`/proc/${nats.pid}`) && isProcessAlive(nats.pid)).toBe(false);
    expect(await eventually(() => livePidsInGroup(pgid).length === 0, 1000)).toBe(true);
    expect(exits).toEqual([info]);
    expect(await nats.stop()).toBe(info);
    await cleanup();
  });

  it('reports an unexpected exit through onExit and the logger, without throwing', async () => {
    const logger = recordingLogger();
    let reported: NatsExitInfo | undefined;
    const { nats, cleanup } = await startTestNats({ logger, onExit: (i) => (reported = i) });
    process.kill(nats.pid, 'SIGKILL');
    const info = await nats.exited;
    expect(info).toMatchObject({ expected: false, signal: 'SIGKILL' });
    expect(reported).toBe(info);
    expect(
      logger.lines.some((l) => l.startsWith('error bus: embedded nats-server exited unexpectedly')),
    ).toBe(true);
    expect(await eventually(() => livePidsInGroup(nats.pgid).length === 0, 1000)).toBe(true);
    await cleanup();
  });

  it('a missing binary is nats_server_missing with the install hint', async () => {
    const stateDir = tempStateDir();
    for (const binary of ['/nonexistent/nats-server', 'snotra-no-such-nats-server']) {
      const err = await startEmbeddedNats({ stateDir, binary }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BusError);
      expect(err).toMatchObject({ code: 'nats_server_missing' });
      expect((err as Error).message).toContain('apt-get install -y nats-server');
      expect((err as Error).message).toContain('brew install nats-server');
      expect((err as Error).message).toContain('set `bus.serverPath` in the config');
    }
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('bus.serverPath, relative to the config file, is the binary the runtime starts', async () => {
    const dir = tempStateDir();
    const file = join(dir, 'snotra.config.json');
    writeFileSync(file, JSON.stringify({ stateDir: 'state', bus: { serverPath: 'bin/nats-server' } }));
    const loaded = loadConfig(file);
    expect(loaded.config.bus.serverPath).toBe(join(dir, 'bin', 'nats-server'));
    const err = await Runtime.start({ loaded, model: new ScriptedModel({}), logLevel: 'silent' }).catch(
      (e: unknown) => e as Error,
    );
    expect(err).toMatchObject({ code: 'nats_server_missing' });
    expect((err as Error).message).toContain(join(dir, 'bin', 'nats-server'));
    rmSync(dir, { recursive: true, force: true });
  });

  it('a server that fails at start-up is nats_server_start_failed with its stderr tail', async () => {
    const stateDir = tempStateDir();
    const fake = join(stateDir, 'fake-nats-server');
    writeFileSync(
      fake,
      `#!/bin/sh\necho "fatal: cannot start ($${TOKEN_ENV})" >&2\necho "token=$${TOKEN_ENV}" >&2\nexit 3\n`,
    );
    chmodSync(fake, 0o700);
    const err = await startEmbeddedNats({ stateDir, binary: fake }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'nats_server_start_failed', details: { code: 3 } });
    expect((err as Error).message).toContain('fatal: cannot start');
    expect((err as Error).message).toContain('token=[redacted]');
    expect((err as Error).message).not.toMatch(/snotra_[0-9a-f]{64}/);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('a server that never listens is nats_server_start_timeout and is killed', async () => {
    const stateDir = tempStateDir();
    const fake = join(stateDir, 'slow-nats-server');
    const pidFile = join(stateDir, 'slow.pid');
    writeFileSync(fake, `#!/bin/sh\necho $$ > '${pidFile}'\necho "starting slowly" >&2\nexec sleep 300\n`);
    chmodSync(fake, 0o700);
    mkdirSync(join(stateDir, 'nats'), { recursive: true });
    const err = await startEmbeddedNats({ stateDir, binary: fake, startTimeoutMs: 400 }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'nats_server_start_timeout' });
    expect((err as Error).message).toContain('starting slowly');
    // Killed, not left to sleep its 300 s.
    const slowPid = Number(readFileSync(pidFile, 'utf8'));
    expect(await eventually(() => !isProcessAlive(slowPid), 30_000)).toBe(true);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('stop() escalates to SIGKILL when the server ignores SIGTERM', async () => {
    const stateDir = tempStateDir();
    // A "server" that ignores SIGTERM: it runs the real nats-server (which does stop on SIGTERM) and
    // publishes that server's port under its own pid, then hangs.
    const fake = join(stateDir, 'stubborn-nats-server');
    writeFileSync(
      fake,
      [
        '#!/bin/sh',
        "trap '' TERM INT HUP",
        'mkdir -p "$4/real"',
        `${resolveNatsBinary()} -c "$2" --ports_file_dir "$4/real" &`,
        'real=$!',
        'while [ ! -s "$4/real/nats-server_$real.ports" ]; do sleep 0.05; done',
        'cp "$4/real/nats-server_$real.ports" "$4/nats-server_$$.ports"',
        'while :; do sleep 1; done',
        '',
      ].join('\n'),
    );
    chmodSync(fake, 0o700);
    const nats = await startEmbeddedNats({ stateDir, binary: fake, stopGraceMs: 300 });
    const started = Date.now();
    const info = await nats.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(info).toMatchObject({ expected: true, signal: 'SIGKILL' });
    expect(isProcessAlive(nats.pid)).toBe(false);
    expect(await eventually(() => livePidsInGroup(nats.pgid).length === 0, 1000)).toBe(true);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('an unwritable state dir is nats_invalid_state_dir', async () => {
    const stateDir = tempStateDir();
    writeFileSync(join(stateDir, 'nats'), 'a file where the folder should be');
    await expect(startEmbeddedNats({ stateDir })).rejects.toMatchObject({ code: 'nats_invalid_state_dir' });
    await expect(startEmbeddedNats({ stateDir: join(stateDir, 'a"b') })).rejects.toMatchObject({
      code: 'nats_invalid_state_dir',
    });
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('replaces a pre-existing config file that had loose permissions', async () => {
    const stateDir = tempStateDir();
    mkdirSync(join(stateDir, 'nats'), { recursive: true, mode: 0o755 });
    writeFileSync(join(stateDir, 'nats/nats-server.conf'), 'old', { mode: 0o644 });
    const nats = await startEmbeddedNats({ stateDir });
    expect(statSync(nats.configFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'nats')).mode & 0o777).toBe(0o700);
    await nats.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });
});
