import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../runtime/config/errors.ts';
import { parseConfig } from '../../runtime/config/load.ts';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-telemetry-config-')));
mkdirSync(join(dir, 'x'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(telemetry: unknown): string[] {
  try {
    parseConfig(JSON.stringify({ telemetry }), join(dir, 'x', 'snotra.config.json'), join(dir, 'x'));
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  return [];
}

describe('telemetry config', () => {
  it('takes an endpoint, secret-reference headers, a ratio and captureContent; no key means off', () => {
    expect(
      problemsOf({
        otlp: {
          endpoint: 'https://otlp.example.com/otlp',
          headers: { Authorization: { env: 'GRAFANA_API_KEY' }, 'x-team': 'a' },
        },
        sampleRatio: 0.25,
        captureContent: true,
      }),
    ).toEqual([]);
    const off = parseConfig('{}', join(dir, 'x', 'snotra.config.json'), join(dir, 'x'));
    expect(off.config.telemetry).toBeUndefined();
  });

  it('refuses bad input, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ otlp: { endpoint: 'ftp://collector:4318' } }, 'telemetry.otlp.endpoint'],
      [{ otlp: { endpoint: 'not a url' } }, 'telemetry.otlp.endpoint'],
      // Credentials never go in a URL (they would be exported, logged, shown).
      [{ otlp: { endpoint: 'https://user:pass@collector:4318' } }, 'credentials in the URL'],
      [
        {
          otlp: {
            endpoint: 'http://127.0.0.1:4318',
            headers: { Authorization: { env: 'AWS_SECRET_ACCESS_KEY' } },
          },
        },
        'telemetry.otlp.headers.Authorization',
      ],
      [
        { otlp: { endpoint: 'http://127.0.0.1:4318', headers: { 'bad header': 'x' } } },
        'telemetry.otlp.headers',
      ],
      [{ otlp: { endpoint: 'http://127.0.0.1:4318' }, sampleRatio: 1.5 }, 'telemetry.sampleRatio'],
      [{ otlp: { endpoint: 'http://127.0.0.1:4318' }, captureContnet: true }, 'captureContnet'],
      [{}, 'telemetry.otlp'],
    ];
    for (const [telemetry, named] of cases) {
      const problems = problemsOf(telemetry);
      expect(problems.join('\n'), JSON.stringify(telemetry)).toContain(named);
    }
  });
});
