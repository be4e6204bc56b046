import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** What one POST came to: an answer (any status), or a failure below HTTP, as a code. */
export type PostResult =
  | { readonly kind: 'response'; readonly status: number; readonly text: string }
  | { readonly kind: 'too_large'; readonly status: number }
  | { readonly kind: 'network'; readonly code: string };

/** A code below HTTP (refused, reset, timed out): never the URL, which may hold a token. */
function errorCode(err: unknown, timedOut: boolean): string {
  if (timedOut) return 'TimeoutError';
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code)) return code;
  const name = (err as { name?: unknown }).name;
  if (name === 'AbortError') return 'AbortError';
  return 'network_error';
}

/**
 * POSTs a JSON body and reads the answer, at most `maxBytes` of it, on a connection of its own
 * (`Connection: close`, no agent). A pooled keep-alive connection races the server closing it
 * while idle: a request written just as the server closes it fails with no answer, and the
 * sender cannot tell that from a request the server took, so a reply would be lost (not resent:
 * it might have arrived). One connection per request takes that race away; the cost is one
 * handshake per request. Redirects are not followed (a 3xx is an answer like any other).
 */
export function postJson(
  url: URL,
  body: unknown,
  opts: { readonly signal: AbortSignal; readonly timeoutMs: number; readonly maxBytes: number },
): Promise<PostResult> {
  const payload = Buffer.from(JSON.stringify(body));
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, timeout]);
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const fail = (err: unknown) => done({ kind: 'network', code: errorCode(err, timeout.aborted) });
    let req: ReturnType<typeof httpRequest>;
    try {
      req = send(url, {
        method: 'POST',
        agent: false,
        signal,
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          connection: 'close',
        },
      });
    } catch (err) {
      fail(err);
      return;
    }
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const declared = Number(res.headers['content-length'] ?? '0');
      if (declared > opts.maxBytes) {
        done({ kind: 'too_large', status });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) {
          done({ kind: 'too_large', status });
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('aborted', () => fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
      res.on('end', () => done({ kind: 'response', status, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.end(payload);
  });
}
