/** `http_request {url, method, body?, headers?, idempotencyKey?}`: one guarded HTTP exchange. */
import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ToolErrorCode } from '../codes.ts';
import { throwIfCancelled } from '../paths.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import { checkTarget, parseRequestUrl, type CheckedTarget, type TargetPolicy } from './target.ts';

/** A header added to requests for one exact origin, its value taken from a secret. */
export interface InjectedCredential {
  /** Exact origin, e.g. `https://api.github.com` (scheme, host and port must all match). */
  readonly origin: string;
  /** Header name, e.g. `authorization`. */
  readonly header: string;
  /** Name of the secret holding the value. */
  readonly secret: string;
  /** Text before the value, e.g. `Bearer `. */
  readonly prefix?: string;
}

/** Options of the `http_request` executor. */
export interface HttpRequestOptions extends TargetPolicy {
  /** Response body bytes kept at most (default 1 MiB); more sets `truncated`. */
  readonly maxBodyBytes?: number;
  /** Whole exchange, redirects included (default 30 s). */
  readonly timeoutMs?: number;
  /** Redirects followed at most (default 5). */
  readonly maxRedirects?: number;
  /** Credentials added per origin, resolved from secrets at call time. */
  readonly credentials?: readonly InjectedCredential[];
}

/** What `http_request` returns. */
export interface HttpResponseResult {
  readonly status: number;
  readonly statusText: string;
  /** The URL that answered (after redirects). */
  readonly url: string;
  readonly redirects: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly bodyBytes: number;
  readonly truncated: boolean;
}

const REFUSED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
]);
const ORIGIN_BOUND_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface Exchange {
  readonly status: number;
  readonly statusText: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly bodyBytes: number;
  readonly truncated: boolean;
}

function pinnedLookup(target: CheckedTarget): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all === true) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

function exchange(
  target: CheckedTarget,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  maxBodyBytes: number,
  signal: AbortSignal,
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const module = target.url.protocol === 'https:' ? https : http;
    const request = module.request(
      {
        protocol: target.url.protocol,
        hostname: target.host,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method,
        headers,
        lookup: pinnedLookup(target),
        signal,
        ...(target.url.protocol === 'https:' ? { servername: target.host } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let total = 0;
        let truncated = false;
        const finish = (): void =>
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            headers: response.headers,
            body: Buffer.concat(chunks, kept),
            bodyBytes: total,
            truncated,
          });
        response.on('data', (chunk: Buffer) => {
          total += chunk.length;
          const room = maxBodyBytes - kept;
          if (chunk.length > room) {
            if (room > 0) chunks.push(chunk.subarray(0, room));
            kept += Math.max(0, room);
            truncated = true;
            response.destroy();
            finish();
            return;
          }
          chunks.push(chunk);
          kept += chunk.length;
        });
        response.once('end', finish);
        response.once('error', (error) => (truncated ? finish() : reject(error)));
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

function headerRecord(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function userHeaders(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined || raw === null) return out;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const key = name.toLowerCase();
    if (REFUSED_HEADERS.has(key))
      throw new ToolError(ToolErrorCode.headerRefused, `the header ${key} cannot be set`);
    if (/[\r\n\0]/.test(String(value)) || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key)) {
      throw new ToolError(ToolErrorCode.headerRefused, `the header ${key} is malformed`);
    }
    out[key] = String(value);
  }
  return out;
}

/**
 * Creates the `http_request` executor. Guarantees: only http and https, never credentials in
 * the URL; every hop (the first and each redirect) is checked by `checkTarget` and connected to
 * the checked address only; at most `maxRedirects` redirects, 303 (and 301/302 after a
 * non-GET) continue as GET without body; `authorization`, `cookie` and injected credentials are
 * sent only to the origin they were meant for; the body is capped at `maxBodyBytes`; the whole
 * exchange is bounded by `timeoutMs` and `ctx.signal`. Mutating methods carry the call's
 * idempotency key as `Idempotency-Key` unless the caller set one.
 */
export function createHttpRequestExecutor(options: HttpRequestOptions = {}): ToolExecutor {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxRedirects = options.maxRedirects ?? 5;
  const credentials = (options.credentials ?? []).map((c) => ({
    ...c,
    origin: parseRequestUrl(c.origin).origin,
  }));
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<HttpResponseResult> {
      throwIfCancelled(ctx.signal);
      let url = parseRequestUrl(String(args.url));
      const firstOrigin = url.origin;
      let method = String(args.method);
      let body = typeof args.body === 'string' ? args.body : undefined;
      const base = userHeaders(args.headers);
      if (!['GET', 'HEAD'].includes(method) && base['idempotency-key'] === undefined) {
        base['idempotency-key'] =
          typeof args.idempotencyKey === 'string' ? args.idempotencyKey : ctx.idempotencyKey;
      }
      const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
      const signal = AbortSignal.any([ctx.signal, timeout]);
      try {
        for (let hop = 0; ; hop += 1) {
          const target = await checkTarget(url, options);
          const headers = await hopHeaders(base, target.url, firstOrigin, credentials, ctx);
          const isRedirectable = hop < maxRedirects;
          const reply = await exchange(target, method, headers, body, maxBodyBytes, signal);
          const location = reply.headers.location;
          if (REDIRECTS.has(reply.status) && typeof location === 'string') {
            if (!isRedirectable)
              throw new ToolError(ToolErrorCode.tooManyRedirects, `more than ${maxRedirects} redirects`);
            url = new URL(location, target.url);
            if (
              reply.status === 303 ||
              ((reply.status === 301 || reply.status === 302) && method !== 'GET' && method !== 'HEAD')
            ) {
              method = method === 'HEAD' ? 'HEAD' : 'GET';
              body = undefined;
            }
            continue;
          }
          return {
            status: reply.status,
            statusText: reply.statusText,
            url: target.url.href,
            redirects: hop,
            headers: headerRecord(reply.headers),
            body: reply.body.toString('utf8'),
            bodyBytes: reply.bodyBytes,
            truncated: reply.truncated,
          };
        }
      } catch (error) {
        if (error instanceof ToolError) throw error;
        if (ctx.signal.aborted) throw new ToolError(ToolErrorCode.cancelled, 'the call was cancelled');
        if (timeout.aborted)
          throw new ToolError(ToolErrorCode.httpTimeout, 'the request ran past its time limit');
        const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
        throw new ToolError(ToolErrorCode.httpFailed, `the request failed (${code})`);
      }
    },
  };
}

async function hopHeaders(
  base: Readonly<Record<string, string>>,
  url: URL,
  firstOrigin: string,
  credentials: readonly InjectedCredential[],
  ctx: ToolExecutionContext,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (ORIGIN_BOUND_HEADERS.has(name) && url.origin !== firstOrigin) continue;
    headers[name] = value;
  }
  for (const credential of credentials) {
    if (credential.origin !== url.origin) continue;
    const value = await ctx.secrets.resolve(credential.secret);
    headers[credential.header.toLowerCase()] = `${credential.prefix ?? ''}${value}`;
  }
  return headers;
}
