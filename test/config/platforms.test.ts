import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../runtime/config/errors.ts';
import { configJsonSchema } from '../../runtime/config/json-schema.ts';
import { loadConfig } from '../../runtime/config/load.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-platform-config-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let n = 0;
function load(platform: Record<string, unknown>) {
  const dir = join(base, `w${++n}`);
  mkdirSync(join(dir, 'project'), { recursive: true });
  const file = join(dir, 'snotra.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: { bot: { mode: 'ask' } },
      surfaces: { platforms: [platform] },
    }),
  );
  return { file, dir, load: () => loadConfig(file) };
}

const good = { id: 'tg', kind: 'telegram', agent: 'bot', token: { secret: 'telegram-bot' } };

function problems(platform: Record<string, unknown>): string[] {
  const w = load(platform);
  try {
    w.load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect(existsSync(join(w.dir, 'state'))).toBe(false);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('surfaces.platforms config', () => {
  it('accepts a telegram connection with its optional fields', () => {
    const w = load({
      ...good,
      apiBase: 'http://127.0.0.1:8081',
      allowedChats: [123, -1001],
      maxTurnsPerMessage: 3,
    });
    const cfg = w.load().config.surfaces.platforms[0];
    expect(cfg).toMatchObject({
      id: 'tg',
      kind: 'telegram',
      allowedChats: [123, -1001],
      maxTurnsPerMessage: 3,
    });
    expect(
      load({ ...good, apiBase: 'https://bots.example.org/api' }).load().config.surfaces.platforms,
    ).toHaveLength(1);
  });

  it.each([
    [{ ...good, kind: 'slack' }, 'surfaces.platforms[0].kind'],
    [{ ...good, token: 'plain-text-token' }, 'surfaces.platforms[0].token'],
    [{ ...good, token: undefined }, 'surfaces.platforms[0].token'],
    [{ ...good, agent: 'bto' }, 'surfaces.platforms[0].agent: unknown agent "bto"; did you mean "bot"?'],
    [{ ...good, id: 'has space' }, 'surfaces.platforms[0].id'],
    [{ ...good, allowedChats: [1.5] }, 'surfaces.platforms[0].allowedChats[0]'],
    [{ ...good, allowedChats: [7, 7] }, 'surfaces.platforms[0].allowedChats[1]: duplicate chat id 7'],
    [{ ...good, maxTurnsPerMessage: 0 }, 'surfaces.platforms[0].maxTurnsPerMessage'],
    [{ ...good, botToken: 'x' }, 'botToken'],
    [
      { ...good, apiBase: 'http://api.telegram.org' },
      'surfaces.platforms[0].apiBase: plain http is only allowed to a loopback server',
    ],
    [
      { ...good, apiBase: 'https://u:p@api.telegram.org' },
      'surfaces.platforms[0].apiBase: must not hold credentials',
    ],
    [
      { ...good, apiBase: 'https://api.telegram.org/?x=1' },
      'surfaces.platforms[0].apiBase: must not have a query or fragment',
    ],
    [{ ...good, apiBase: 'ftp://127.0.0.1' }, 'surfaces.platforms[0].apiBase: expected an http(s) URL'],
    [{ ...good, apiBase: 'not a url' }, 'surfaces.platforms[0].apiBase: "not a url" is not a URL'],
  ])('refuses %j naming the field', (platform, where) => {
    const found = problems(platform as Record<string, unknown>);
    expect(
      found.some((p) => p.includes(where)),
      JSON.stringify(found),
    ).toBe(true);
  });

  it('look-alikes that are fine: loopback names over http, a negative group id', () => {
    for (const apiBase of ['http://localhost:9000', 'http://[::1]:9000', 'http://127.0.0.2']) {
      expect(load({ ...good, apiBase }).load().config.surfaces.platforms[0]?.apiBase).toBe(apiBase);
    }
  });

  it('the JSON Schema describes every field of a telegram connection', () => {
    const schema = JSON.stringify(configJsonSchema());
    for (const text of [
      'The Bot API root',
      'The only chat ids that may pair',
      'Most model turns one message may cost',
    ])
      expect(schema).toContain(text);
  });
});
