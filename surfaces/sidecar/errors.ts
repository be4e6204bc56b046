import type { ServerResponse } from 'node:http';

/** Headers every sidecar answer carries (never anything taken from the request). */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  Vary: 'Origin',
};

/** A request the sidecar refuses: the status, a stable code and a sentence that echoes no header. */
export class SidecarError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SidecarError';
  }
}

/** Writes a JSON answer with the base headers plus `extra` (CORS headers for an allowed origin). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  extra: Readonly<Record<string, string>> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...BASE_HEADERS,
    ...extra,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Writes `{"error":{"code","message"}}`. */
export function sendError(
  res: ServerResponse,
  err: SidecarError,
  extra: Readonly<Record<string, string>> = {},
): void {
  sendJson(res, err.status, { error: { code: err.code, message: err.message } }, extra);
}

/** The raw HTTP answer for a refused WebSocket upgrade (written to the socket before any handshake). */
export function rawErrorResponse(err: SidecarError): string {
  const body = JSON.stringify({ error: { code: err.code, message: err.message } });
  const reason = STATUS_TEXT[err.status] ?? 'Error';
  return (
    `HTTP/1.1 ${err.status} ${reason}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    'X-Content-Type-Options: nosniff\r\n' +
    'Connection: close\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
};
