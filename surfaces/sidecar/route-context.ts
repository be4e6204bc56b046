import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Runtime } from '../../runtime/index.ts';
import { SidecarError, sendJson } from './errors.ts';

/** What a route handler may use. */
export interface RouteContext {
  readonly runtime: Runtime;
  /** Who decides through the sidecar: `sidecar:<local user>`. */
  readonly user: string;
  readonly bodyBytes: number;
  readonly cors: Readonly<Record<string, string>>;
}

/** A route's handler: its path parameters are percent-decoded. */
export type Handler = (
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  params: string[],
) => Promise<void> | void;

/** A request body checked against its schema; a 400 `invalid_body` naming each bad field otherwise. */
export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const problems = r.error.issues
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'body'}: ${i.message}`)
    .join('; ');
  throw new SidecarError(400, 'invalid_body', problems);
}

/** Answers with a JSON body, redacted. */
export function reply(ctx: RouteContext, res: ServerResponse, status: number, body: unknown): void {
  sendJson(res, status, ctx.runtime.read.redact(body), ctx.cors);
}
