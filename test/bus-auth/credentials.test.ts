import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errors as natsErrors, nkeys } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentGrant,
  busAuthDir,
  BusMinter,
  decodeJwt,
  SEEDS_FILE,
  signJwt,
  type BusUserCredentials,
  type JwtClaims,
} from '../../runtime/bus/auth/index.ts';
import { rawConnect, startAuthNats } from './helpers.ts';

type Started = Awaited<ReturnType<typeof startAuthNats>>;
const ENVELOPE = { mode: 'ask', mayDelegate: true } as const;

async function refused(url: string, creds: BusUserCredentials): Promise<unknown> {
  try {
    const nc = await rawConnect(url, creds);
    await nc.close();
    return null;
  } catch (err) {
    return err;
  }
}

function reencode(jwt: string, edit: (c: JwtClaims<Record<string, unknown>>) => void): string {
  const [h, c, sig] = jwt.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as JwtClaims<
    Record<string, unknown>
  >;
  edit(claims);
  return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
}

describe('bus credentials the server must refuse (real nats-server, operator mode)', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startAuthNats();
  });
  afterAll(async () => {
    await s?.cleanup();
  });

  it('benign: a freshly minted actor JWT connects, and it verifies against the signing key', async () => {
    const m = s.auth.minter.mint(agentGrant('a', ENVELOPE), { name: 'actor-agent-a', ttlMs: 60_000 });
    expect(await refused(s.nats.url, m.credentials)).toBeNull();
    const { claims } = decodeJwt(m.credentials.jwt);
    expect(claims.nats.type).toBe('user');
    expect(claims.sub).toBe(m.publicKey);
    expect(claims.nats.issuer_account).toBe(s.auth.minter.accountPublicKey);
    expect(claims.iss).not.toBe(s.auth.minter.accountPublicKey);
  });

  it('an expired JWT is refused', async () => {
    const past = new BusMinter(
      // Same signing key, a clock an hour back: the JWT expired 59 minutes ago.
      signingOf(s),
      s.auth.minter.accountPublicKey,
      () => Date.now() - 3_600_000,
    );
    const m = past.mint(agentGrant('a', ENVELOPE), { name: 'expired', ttlMs: 60_000 });
    expect(m.expiresAt).toBeLessThan(Date.now());
    const err = await refused(s.nats.url, m.credentials);
    expect(err).not.toBeNull();
    expect(
      err instanceof natsErrors.AuthorizationError ||
        err instanceof natsErrors.UserAuthenticationExpiredError,
    ).toBe(true);
  });

  it('a JWT signed by a key that is not the account or its signing key is refused', async () => {
    const rogue = new BusMinter(nkeys.createAccount(), s.auth.minter.accountPublicKey);
    const err = await refused(
      s.nats.url,
      rogue.mint(agentGrant('a', ENVELOPE), { name: 'rogue' }).credentials,
    );
    expect(err).toBeInstanceOf(natsErrors.AuthorizationError);
  });

  it('a JWT whose claims were edited after signing (widened permissions) is refused', async () => {
    const m = s.auth.minter.mint(agentGrant('a', ENVELOPE), { name: 'forged' });
    const forged = reencode(m.credentials.jwt, (c) => {
      (c.nats as { pub: unknown }).pub = { allow: ['>'] };
      (c.nats as { sub: unknown }).sub = { allow: ['>'] };
    });
    expect(() => decodeJwt(forged)).toThrow(/signature/);
    expect(await refused(s.nats.url, { jwt: forged, seed: m.credentials.seed })).toBeInstanceOf(
      natsErrors.AuthorizationError,
    );
  });

  it("a valid JWT presented with another user's seed is refused (the nonce signature does not match)", async () => {
    const m1 = s.auth.minter.mint(agentGrant('a', ENVELOPE), { name: 'one' });
    const m2 = s.auth.minter.mint(agentGrant('b', ENVELOPE), { name: 'two' });
    expect(await refused(s.nats.url, { jwt: m1.credentials.jwt, seed: m2.credentials.seed })).toBeInstanceOf(
      natsErrors.AuthorizationError,
    );
  });

  it('a JWT naming another issuer account, a self-signed user JWT and the token mode are refused', async () => {
    const signing = signingOf(s);
    const user = nkeys.createUser();
    const otherAccount = signJwt(
      {
        iat: Math.floor(Date.now() / 1000),
        sub: user.getPublicKey(),
        name: 'other-account',
        nats: {
          type: 'user',
          version: 2,
          issuer_account: nkeys.createAccount().getPublicKey(),
          pub: { allow: ['>'] },
          sub: { allow: ['>'] },
          subs: -1,
          data: -1,
          payload: -1,
        },
      },
      signing,
    );
    expect(await refused(s.nats.url, { jwt: otherAccount, seed: user.getSeed() })).toBeInstanceOf(
      natsErrors.AuthorizationError,
    );
    const self = signJwt(
      {
        iat: Math.floor(Date.now() / 1000),
        sub: user.getPublicKey(),
        name: 'self',
        nats: {
          type: 'user',
          version: 2,
          pub: { allow: ['>'] },
          sub: { allow: ['>'] },
          subs: -1,
          data: -1,
          payload: -1,
        },
      },
      nkeys.fromSeed(user.getSeed()),
    );
    expect(await refused(s.nats.url, { jwt: self, seed: user.getSeed() })).toBeInstanceOf(
      natsErrors.AuthorizationError,
    );
    const { connect } = await import('@nats-io/transport-node');
    await expect(
      connect({ servers: s.nats.url, token: 'snotra_0000', reconnect: false, timeout: 5000 }),
    ).rejects.toBeInstanceOf(natsErrors.AuthorizationError);
  });

  it('seeds stay in a 0600 file in a 0700 folder, never in the server config or its argv', () => {
    const dir = busAuthDir(s.stateDir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const file = join(dir, SEEDS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const seeds = Object.values(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>).filter(
      (v): v is string => typeof v === 'string',
    );
    expect(seeds).toHaveLength(4);
    const config = readFileSync(s.nats.configFile, 'utf8');
    expect(statSync(s.nats.configFile).mode & 0o777).toBe(0o600);
    expect(config).toContain('resolver: MEMORY');
    // Operator mode: no token and no users in the config; its one authorization line only gives a
    // client time to authenticate (the JWTs do the rest).
    expect(config.match(/authorization[^\n]*/g)).toEqual(['authorization { timeout: 10 }']);
    // No setting (the key before its value; JWTs are values) names a token, users or a password.
    const keys = config
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .map((l) => l.trim().split(/[\s:={]/)[0]);
    expect(keys.filter((k) => /token|users|password/i.test(k ?? ''))).toEqual([]);
    const argv = readFileSync(`/proc/${s.nats.pid}/cmdline`, 'utf8');
    const environ = readFileSync(`/proc/${s.nats.pid}/environ`, 'utf8');
    for (const seed of seeds) {
      expect(seed.startsWith('S')).toBe(true);
      expect(config).not.toContain(seed);
      expect(argv).not.toContain(seed);
      expect(environ).not.toContain(seed);
    }
  });
});

function signingOf(s: Started): nkeys.KeyPair {
  const stored = JSON.parse(readFileSync(join(busAuthDir(s.stateDir), SEEDS_FILE), 'utf8')) as {
    signing: string;
  };
  return nkeys.fromSeed(new TextEncoder().encode(stored.signing));
}
