import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { createRequire } from 'node:module';
import type * as WsLibrary from 'ws';
import type { WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import type { Runtime } from '../../runtime/index.ts';
import {
  checkHost,
  checkOrigin,
  checkSingleHeaders,
  checkToken,
  tokenMatches,
  wsTokenOf,
  type Peers,
} from './auth.ts';
import { SidecarError, rawErrorResponse } from './errors.ts';
import { sessionBusy } from './session-routes.ts';
import type { EventHub } from './hub.ts';
import { clientKey, type ConnectionGate, type RateLimiter } from './limits.ts';

/** The subprotocol the server answers (the client also offers `snotra.token.<token>`). */
export const WS_PROTOCOL = 'snotra.v1';
/** A WebSocket client this far behind (bytes buffered) is sent one error message and closed (1008). */
export const WS_LAG_BYTES = 1024 * 1024;

const ChatMessage = z.strictObject({
  type: z.literal('chat'),
  agent: z.string().min(1),
  text: z.string().min(1).max(100_000),
  sessionId: z.string().min(1).max(200).optional(),
});

export interface WsOptions {
  readonly runtime: Runtime;
  readonly token: string;
  readonly peers: () => Peers;
  readonly hub: EventHub;
  readonly gate: ConnectionGate;
  readonly rate: RateLimiter;
  readonly frameBytes: number;
}

/**
 * The `GET /v1/ws` endpoint: Host, Origin and token are checked in the `upgrade` handler, before
 * any handshake; a refused upgrade gets a plain HTTP error and the socket is closed. Accepted
 * clients receive `{"type":"event","seq","event"}` messages and may send
 * `{"type":"chat","agent","text","sessionId"?}` (answered `{"type":"chat.accepted","runId"}`).
 * A frame over `frameBytes` closes the connection with 1009.
 */
export function webSocketEndpoint(options: WsOptions) {
  // The WebSocket library loads at the first upgrade that passed every check (not before the
  // ready line: it was a noticeable share of `snotra start` under load).
  let server: WebSocketServer | null = null;
  const wss = (): WebSocketServer => {
    if (server !== null) return server;
    const { WebSocketServer: Server } = createRequire(import.meta.url)('ws') as typeof WsLibrary;
    server = new Server({
      noServer: true,
      maxPayload: options.frameBytes,
      handleProtocols: (protocols) => (protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
    });
    return server;
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    let release: () => void;
    try {
      const peers = options.peers();
      checkSingleHeaders(req.rawHeaders);
      checkHost(req.headers.host, peers);
      checkOrigin(req.headers.origin, peers);
      const presented = wsTokenOf(req.headers['sec-websocket-protocol']);
      options.rate.take(clientKey(tokenMatches(presented, options.token), req.headers.origin));
      checkToken(presented, options.token);
      if (req.url !== '/v1/ws') throw new SidecarError(404, 'not_found', 'no such route');
      release = options.gate.acquire();
    } catch (err) {
      const e =
        err instanceof SidecarError ? err : new SidecarError(400, 'bad_upgrade', 'the upgrade was refused');
      socket.end(rawErrorResponse(e));
      return;
    }
    wss().handleUpgrade(req, socket, head, (ws) => serve(ws, options, release));
  };
  return {
    onUpgrade,
    close() {
      if (server === null) return;
      for (const c of server.clients) c.terminate();
      server.close();
    },
  };
}

function serve(ws: WebSocket, options: WsOptions, release: () => void): void {
  const send = (msg: unknown) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > WS_LAG_BYTES) {
      // One error message (queued behind what it has not read), then the close: nothing more is sent.
      ws.send(
        JSON.stringify({
          type: 'error',
          error: { code: 'client_lagging', message: 'the client read too slowly; reconnect' },
        }),
      );
      ws.close(1008, 'client lagging');
      return;
    }
    ws.send(JSON.stringify(options.runtime.read.redact(msg)));
  };
  const unsubscribe = options.hub.subscribe((e) => send({ type: 'event', seq: e.seq, event: e.event }));
  ws.on('close', () => {
    unsubscribe();
    release();
  });
  ws.on('error', () => ws.terminate());
  ws.on('message', (data, isBinary) => {
    void (async () => {
      try {
        options.rate.take(clientKey(true, undefined));
        let value: unknown;
        try {
          value = isBinary ? undefined : JSON.parse(String(data));
        } catch {
          value = undefined;
        }
        const r = ChatMessage.safeParse(value);
        if (!r.success)
          throw new SidecarError(
            400,
            'invalid_message',
            'expected {"type":"chat","agent","text","sessionId"?}',
          );
        const m = r.data;
        if (!options.runtime.read.hasAgent(m.agent)) {
          throw new SidecarError(404, 'unknown_agent', `no agent ${JSON.stringify(m.agent)} in the config`);
        }
        const runId = await options.runtime.runs.submit(m.agent, m.text, {
          ...(m.sessionId === undefined ? {} : { sessionId: m.sessionId }),
          surface: 'sidecar',
          interaction: 'attended',
        });
        send({ type: 'chat.accepted', runId });
      } catch (err) {
        const known = sessionBusy(err);
        const e =
          known instanceof SidecarError
            ? known
            : new SidecarError(500, 'internal', 'the message could not be handled');
        send({ type: 'error', error: { code: e.code, message: e.message } });
      }
    })();
  });
}
