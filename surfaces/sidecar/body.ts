import type { IncomingMessage } from 'node:http';
import { SidecarError } from './errors.ts';

/** The request's JSON body: `Content-Type: application/json` (415), at most `limit` bytes (413), valid JSON (400). */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = req.headers['content-type'];
  if (type === undefined || !/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(type)) {
    throw new SidecarError(
      415,
      'unsupported_media_type',
      'POST bodies must be Content-Type: application/json',
    );
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    throw new SidecarError(413, 'body_too_large', `the body is larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > limit)
        throw new SidecarError(413, 'body_too_large', `the body is larger than ${limit} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof SidecarError) throw err;
    // The client went away or was cut off (the request timeout) before its body was complete:
    // a client's failure, not the runtime's.
    throw new SidecarError(400, 'body_incomplete', 'the request body ended before it was complete');
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new SidecarError(400, 'invalid_json', 'the body is not valid JSON');
  }
}
