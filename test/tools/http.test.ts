import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../actors/tools/http/address.ts';
import { createHttpRequestExecutor, type HttpRequestOptions } from '../../actors/tools/http/http-request.ts';
import { toObservation } from '../../actors/tools/observation.ts';
import type { SecretResolver } from '../../actors/tools/types.ts';
import { createSecretResolver, MemorySecretStore } from '../../runtime/secrets/index.ts';
import { Redactor } from '../../store/redaction/redactor.ts';
import { createTestWorkspace, noSecrets, type TestWorkspace } from './support.ts';
import { runs } from '../support/laws.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Local {
  server: Server;
  port: number;
  hits: number;
  handler: Handler;
}

async function listen(): Promise<Local> {
  const local: Local = { server: createServer(), port: 0, hits: 0, handler: (_q, s) => s.end('ok') };
  local.server.on('request', (req, res) => {
    local.hits += 1;
    local.handler(req, res);
  });
  await new Promise<void>((resolve) => local.server.listen(0, '127.0.0.1', resolve));
  local.port = (local.server.address() as AddressInfo).port;
  return local;
}

let ws: TestWorkspace;
let a: Local;
let b: Local;

beforeAll(async () => {
  ws = createTestWorkspace();
  a = await listen();
  b = await listen();
});
afterAll(async () => {
  for (const s of [a, b]) {
    s.server.closeAllConnections();
    await new Promise((resolve) => s.server.close(resolve));
  }
  ws.cleanup();
});

function request(
  args: { url: string; method?: string; body?: string; headers?: Record<string, string> },
  options: HttpRequestOptions = {},
  secrets: SecretResolver = noSecrets,
) {
  const call = { method: 'GET', ...args };
  const ctx = ws.context(ws.decide('http_request', call), { secrets });
  return createHttpRequestExecutor(options).execute(call, ctx) as Promise<{
    status: number;
    body: string;
    truncated: boolean;
    redirects: number;
    url: string;
  }>;
}

describe('http_request refusals (allowPrivateHosts off)', () => {
  it.each([
    ['file:///etc/passwd', 'url_scheme_refused'],
    ['ftp://example.com/x', 'url_scheme_refused'],
    ['gopher://example.com/', 'url_scheme_refused'],
    ['http://user:pass@example.com/', 'url_credentials_refused'],
    ['https://token@example.com/', 'url_credentials_refused'],
    ['http://127.0.0.1/', 'host_refused'],
    ['http://localhost/', 'host_refused'],
    ['http://[::1]/', 'host_refused'],
    ['http://169.254.169.254/latest/meta-data/', 'host_refused'],
    ['http://10.0.0.1/', 'host_refused'],
    ['http://192.168.1.1/', 'host_refused'],
    ['http://172.16.0.1/', 'host_refused'],
    ['http://0.0.0.0/', 'host_refused'],
    ['http://2130706433/', 'host_refused'],
    ['http://0177.0.0.1/', 'host_refused'],
    ['http://0x7f.0.0.1/', 'host_refused'],
    ['http://127.1/', 'host_refused'],
    ['http://[::ffff:127.0.0.1]/', 'host_refused'],
    ['http://[::ffff:169.254.169.254]/', 'host_refused'],
    ['http://[fe80::1]/', 'host_refused'],
    ['http://[fd00::1]/', 'host_refused'],
    ['not a url', 'url_invalid'],
  ])('refuses %s', async (url, code) => {
    await expect(request({ url })).rejects.toMatchObject({ code });
  });

  it('refuses a local server that is not allowlisted', async () => {
    const before = a.hits;
    await expect(request({ url: `http://127.0.0.1:${a.port}/` })).rejects.toMatchObject({
      code: 'host_refused',
    });
    expect(a.hits).toBe(before);
  });

  it('refuses a name whose DNS answer includes any private address', async () => {
    const resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    await expect(request({ url: 'http://mixed.example/' }, { resolver })).rejects.toMatchObject({
      code: 'host_refused',
    });
  });
});

describe('http_request against allowlisted local servers', () => {
  const allow = (): HttpRequestOptions => ({ allowPrivateHosts: [`127.0.0.1:${a.port}`] });

  it('works against an allowlisted host:port', async () => {
    a.handler = (_req, res) => res.end('hello');
    const result = await request({ url: `http://127.0.0.1:${a.port}/x` }, allow());
    expect(result).toMatchObject({ status: 200, body: 'hello', redirects: 0, truncated: false });
  });

  it('refuses a redirect from the allowlisted server to a non-allowlisted private address', async () => {
    const bHits = b.hits;
    a.handler = (_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${b.port}/internal` });
      res.end();
    };
    await expect(request({ url: `http://127.0.0.1:${a.port}/` }, allow())).rejects.toMatchObject({
      code: 'host_refused',
    });
    expect(b.hits).toBe(bHits);
  });

  it.each(['http://169.254.169.254/', 'http://[::1]/', 'http://10.0.0.1/', 'http://2130706433/'])(
    'refuses a redirect to %s',
    async (location) => {
      a.handler = (_req, res) => {
        res.writeHead(301, { location });
        res.end();
      };
      await expect(request({ url: `http://127.0.0.1:${a.port}/` }, allow())).rejects.toMatchObject({
        code: 'host_refused',
      });
    },
  );

  it('follows allowed redirects, turning a POST into a GET after 303', async () => {
    const seen: string[] = [];
    a.handler = (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/start') {
        res.writeHead(303, { location: '/done' });
        res.end();
      } else res.end('landed');
    };
    const result = await request(
      { url: `http://127.0.0.1:${a.port}/start`, method: 'POST', body: 'x' },
      allow(),
    );
    expect(result).toMatchObject({ body: 'landed', redirects: 1 });
    expect(seen).toEqual(['POST /start', 'GET /done']);
  });

  it('stops after too many redirects', async () => {
    a.handler = (_req, res) => {
      res.writeHead(302, { location: '/again' });
      res.end();
    };
    await expect(
      request({ url: `http://127.0.0.1:${a.port}/` }, { ...allow(), maxRedirects: 3 }),
    ).rejects.toMatchObject({
      code: 'too_many_redirects',
    });
  });

  it('caps the body', async () => {
    a.handler = (_req, res) => res.end('x'.repeat(100_000));
    const result = await request({ url: `http://127.0.0.1:${a.port}/` }, { ...allow(), maxBodyBytes: 1000 });
    expect(result.body).toHaveLength(1000);
    expect(result.truncated).toBe(true);
  });

  it('times out', async () => {
    a.handler = () => {};
    await expect(
      request({ url: `http://127.0.0.1:${a.port}/` }, { ...allow(), timeoutMs: 300 }),
    ).rejects.toMatchObject({
      code: 'http_timeout',
    });
  });

  it('sends the idempotency key on mutating methods', async () => {
    let key: string | undefined;
    a.handler = (req, res) => {
      key = req.headers['idempotency-key'] as string | undefined;
      res.end();
    };
    await request({ url: `http://127.0.0.1:${a.port}/`, method: 'PUT', body: '{}' }, allow());
    expect(key).toBe('idem-1');
  });

  it('never shows an injected credential the server echoes back, and never sends it to another origin', async () => {
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz012345';
    const redactor = new Redactor();
    const secrets = createSecretResolver(new MemorySecretStore({ 'api-token': token }), redactor);
    const options: HttpRequestOptions = {
      allowPrivateHosts: [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`],
      credentials: [
        {
          origin: `http://127.0.0.1:${a.port}`,
          header: 'authorization',
          secret: 'api-token',
          prefix: 'Bearer ',
        },
      ],
    };
    a.handler = (req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end(`rejected credentials: ${req.headers.authorization ?? 'none'}`);
    };
    const result = await request({ url: `http://127.0.0.1:${a.port}/` }, options, secrets);
    expect(result.body).toContain(token);
    const observation = toObservation({ ok: true, result }, redactor);
    expect(observation.content).not.toContain(token);
    expect(observation.content).not.toContain('abcdefghijklmnop');

    let authAtB: string | undefined = 'unset';
    a.handler = (_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${b.port}/` });
      res.end();
    };
    b.handler = (req, res) => {
      authAtB = req.headers.authorization;
      res.end('b');
    };
    await request({ url: `http://127.0.0.1:${a.port}/` }, options, secrets);
    expect(authAtB).toBeUndefined();
  });
});

describe('address classification', () => {
  it('refuses every private IPv4 and its IPv4-mapped IPv6 form alike', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
    fc.assert(
      fc.property(v4, (ip) => {
        expect(isPublicAddress(`::ffff:${ip}`)).toBe(isPublicAddress(ip));
      }),
      { numRuns: runs(100) },
    );
    fc.assert(
      fc.property(fc.nat(255), fc.nat(255), fc.nat(255), (x, y, z) => {
        for (const ip of [
          `10.${x}.${y}.${z}`,
          `127.${x}.${y}.${z}`,
          `169.254.${y}.${z}`,
          `192.168.${y}.${z}`,
        ]) {
          expect(isPublicAddress(ip)).toBe(false);
        }
      }),
      { numRuns: runs(100) },
    );
  });

  it('accepts public addresses', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPublicAddress(ip)).toBe(true);
    }
    for (const ip of ['::', '::1', '64:ff9b::7f00:1', '2002:a00:1::', '2001:db8::1', 'ff02::1', 'garbage']) {
      expect(isPublicAddress(ip)).toBe(false);
    }
  });
});
