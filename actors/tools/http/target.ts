/**
 * Checking one URL hop of `http_request` and choosing the address to connect to. The address
 * is resolved here, checked, and then pinned for the connection, so DNS cannot answer
 * differently between the check and the connect.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ToolErrorCode } from '../codes.ts';
import { ToolError } from '../types.ts';
import { isPublicAddress } from './address.ts';

/** A checked hop: the URL and the address the connection must use. */
export interface CheckedTarget {
  readonly url: URL;
  /** Host name without IPv6 brackets. */
  readonly host: string;
  readonly port: number;
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to all its addresses. */
export type Resolver = (host: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** Options of `checkTarget`. */
export interface TargetPolicy {
  /**
   * `host:port` pairs (as written in URLs, e.g. `127.0.0.1:8080`, `localhost:3000`, `[::1]:80`)
   * that may resolve to non-public addresses. Empty by default: for tests and explicit local
   * services only.
   */
  readonly allowPrivateHosts?: readonly string[];
  readonly resolver?: Resolver;
}

/** Parses `input` and refuses non-http(s) schemes and credentials in the URL. */
export function parseRequestUrl(input: string): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ToolError(ToolErrorCode.urlInvalid, 'the URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError(
      ToolErrorCode.urlSchemeRefused,
      `the scheme ${url.protocol} is not allowed (http and https only)`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new ToolError(ToolErrorCode.urlCredentialsRefused, 'credentials in URLs are not allowed');
  }
  return url;
}

function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Checks one hop. Guarantees: the URL is http(s) without credentials; every address the host
 * resolves to is public (one non-public answer refuses the host, so a mixed DNS answer cannot
 * smuggle a private address), unless `host:port` is in `allowPrivateHosts`; the returned
 * address is one of the checked ones. The WHATWG URL parser has already normalized decimal,
 * octal, hex and IPv4-mapped host forms to canonical addresses.
 */
export async function checkTarget(url: URL, policy: TargetPolicy): Promise<CheckedTarget> {
  const checkedUrl = parseRequestUrl(url.href);
  const host = checkedUrl.hostname.startsWith('[') ? checkedUrl.hostname.slice(1, -1) : checkedUrl.hostname;
  const port = effectivePort(checkedUrl);
  const allowPrivate = (policy.allowPrivateHosts ?? []).includes(`${checkedUrl.hostname}:${port}`);
  const refuse = (): never => {
    throw new ToolError(
      ToolErrorCode.hostRefused,
      `the host ${checkedUrl.hostname} is or resolves to a private, loopback or link-local address`,
    );
  };
  let answers: ReadonlyArray<{ address: string; family: number }>;
  const literal = isIP(host);
  if (literal !== 0) answers = [{ address: host, family: literal }];
  else {
    try {
      answers = await (policy.resolver ?? systemResolver)(host);
    } catch {
      throw new ToolError(ToolErrorCode.dnsFailed, `the host ${checkedUrl.hostname} could not be resolved`);
    }
  }
  const first = answers[0];
  if (first === undefined)
    throw new ToolError(ToolErrorCode.dnsFailed, `the host ${checkedUrl.hostname} has no address`);
  if (!allowPrivate && answers.some((a) => !isPublicAddress(a.address))) refuse();
  return { url: checkedUrl, host, port, address: first.address, family: first.family === 6 ? 6 : 4 };
}
