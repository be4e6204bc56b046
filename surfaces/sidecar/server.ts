import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import type { Runtime } from '../../runtime/index.ts';
import {
  bearerOf,
  checkHost,
  checkOrigin,
  checkSingleHeaders,
  checkToken,
  tokenMatches,
  type Peers,
} from './auth.ts';
import { SidecarError, sendError, sendJson, BASE_HEADERS } from './errors.ts';
import { EventHub } from './hub.ts';
import {
  ConnectionGate,
  HEADERS_TIMEOUT_MS,
  clientKey,
  RateLimiter,
  REQUEST_TIMEOUT_MS,
  limitsOf,
  type SidecarLimits,
} from './limits.ts';
import { cookieContextOk, LoginCodes, sessionCookieOf } from './login.ts';
import { serveLogin } from './login-route.ts';
import { matchRoute } from './routes.ts';
import { serveEvents } from './sse.ts';
import { sendStatic, staticTable, type StaticFile } from './static.ts';
import { webSocketEndpoint } from './ws.ts';

/** Events kept for `Last-Event-ID` replay. */
export const REPLAY_EVENTS = 1000;

/** The sidecar could not listen (`snotra start` exits 1 with this message). */
export class SidecarListenError extends Error {
  readonly code = 'sidecar_listen_failed';
  constructor(port: number, cause: NodeJS.ErrnoException) {
    super(
      `sidecar.port ${port}: cannot listen on 127.0.0.1 (${cause.code === 'EADDRINUSE' ? 'the port is in use' : (cause.code ?? cause.message)})`,
      { cause },
    );
  }
}

export interface SidecarOptions {
  readonly runtime: Runtime;
  readonly token: string;
  /** `sidecar.port` (0: a random free port). */
  readonly port: number;
  readonly allowedOrigins: readonly string[];
  readonly limits?: Partial<SidecarLimits>;
  /** The web app's files by exact request path (default: the built app in surfaces/sidecar/app). */
  readonly staticFiles?: ReadonlyMap<string, StaticFile>;
  /** The time login codes expire by (default: wall time). */
  readonly now?: () => number;
}

export interface Sidecar {
  readonly port: number;
  /** `http://127.0.0.1:<port>` (never with a token). */
  readonly url: string;
  /**
   * A single-use login URL of the web app (`<url>/login?code=…`, the code valid 60 s, exchanged
   * for a cookie session of this launch); never the token.
   */
  loginUrl(): string;
  close(): Promise<void>;
}

/**
 * Starts the local HTTP/SSE/WebSocket API on 127.0.0.1 only. Every request but `GET /health`
 * and `OPTIONS` preflight needs the bearer token; Host and Origin are checked first.
 */
export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const { runtime, token } = options;
  const limits = limitsOf(options.limits);
  const rate = new RateLimiter(limits.requestsPerMinute);
  const gate = new ConnectionGate(limits.connections);
  const hub = new EventHub(REPLAY_EVENTS, (v) => runtime.read.redact(v));
  const offRuns = runtime.runs.onRunEvent((e) => hub.publish(e));
  const offActors = runtime.node.inspect.onActorEvent((e) => hub.publish(e));
  const offFeed = () => {
    offRuns();
    offActors();
  };
  const user = `sidecar:${userInfo().username}`;
  let peers: Peers = { port: options.port, allowedOrigins: options.allowedOrigins };
  const files = options.staticFiles ?? staticTable();
  const logins = new LoginCodes(options.now ?? Date.now);

  const corsOf = (origin: string | undefined): Record<string, string> =>
    origin === undefined
      ? {}
      : {
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, Last-Event-ID',
          'Access-Control-Allow-Methods': 'GET, POST, PATCH',
          'Access-Control-Max-Age': '600',
        };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let cors: Record<string, string> = {};
    try {
      checkSingleHeaders(req.rawHeaders);
      checkHost(req.headers.host, peers);
      const origin = req.headers.origin;
      checkOrigin(origin, peers);
      // Only here is the origin known to be allowed: CORS names it, never `*` or another one.
      cors = corsOf(origin);
      const rawUrl = req.url ?? '';
      if (req.method === 'GET' && rawUrl === '/health') {
        sendJson(res, 200, { ok: true }, cors);
        return;
      }
      const presented = bearerOf(req.headers.authorization);
      // The token, or a cookie session of `snotra open` in a same-origin browser context.
      const authenticated =
        tokenMatches(presented, token) ||
        (presented === undefined &&
          logins.valid(sessionCookieOf(req.headers.cookie)) &&
          cookieContextOk(req.headers));
      rate.take(clientKey(authenticated, origin));
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { ...BASE_HEADERS, ...cors });
        res.end();
        return;
      }
      // The web app's code (no data, no secret) by exact raw path; everything else needs the token.
      const file = req.method === 'GET' || req.method === 'HEAD' ? files.get(rawUrl) : undefined;
      if (file !== undefined) {
        sendStatic(res, file, req.method === 'HEAD');
        return;
      }
      const q = rawUrl.indexOf('?');
      const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
      if (
        req.method === 'GET' &&
        serveLogin(req, res, rawPath, q === -1 ? '' : rawUrl.slice(q + 1), logins, cors)
      )
        return;
      if (!authenticated) checkToken(presented, token);
      if (req.method === 'GET' && rawPath === '/v1/events') {
        const release = gate.acquire();
        serveEvents(req, res, hub, cors, release);
        return;
      }
      const route = matchRoute(req.method ?? '', rawPath);
      if (route === null) throw new SidecarError(404, 'not_found', 'no such route');
      if (route === 'method')
        throw new SidecarError(405, 'method_not_allowed', 'that method is not allowed here');
      await route.handler({ runtime, user, bodyBytes: limits.bodyBytes, cors }, req, res, route.params);
    } catch (err) {
      if (err instanceof SidecarError) {
        sendError(res, err, cors);
        // An oversized body is not read to its end: close the connection after the answer.
        if (err.status === 413) res.once('finish', () => req.destroy());
        return;
      }
      runtime.node.logger.error({ err: (err as Error).message, route: req.method }, 'sidecar request failed');
      sendError(res, new SidecarError(500, 'internal', 'the request failed inside the runtime'), cors);
    }
  };

  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      // How often the timeouts are enforced (Node's default, 30 s, would let a slow client stay 40 s).
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      void handle(req, res);
    },
  );
  const ws = webSocketEndpoint({
    runtime,
    token,
    peers: () => peers,
    hub,
    gate,
    rate,
    frameBytes: limits.frameBytes,
  });
  server.on('upgrade', ws.onUpgrade);
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      offFeed();
      reject(new SidecarListenError(options.port, err));
    };
    server.once('error', failed);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  peers = { port, allowedOrigins: options.allowedOrigins };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    loginUrl: () => `http://127.0.0.1:${port}/login?code=${logins.mint()}`,
    async close() {
      offFeed();
      ws.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
