/**
 * What the model and the database get of an MCP tool result: text and structured content, capped
 * in size and number of blocks; binary content (images, audio, embedded blobs) is described, never
 * passed on. Redaction happens in the one place every observation goes through (`toObservation`).
 */
import type { McpLimits } from './limits.ts';

/** A content block as kept. */
export type McpContent =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'binary';
      readonly kind: string;
      readonly mimeType: string | null;
      readonly bytes: number;
    }
  | { readonly type: 'resource_link'; readonly uri: string; readonly name: string | null }
  | { readonly type: 'other'; readonly kind: string };

/** An MCP tool result, bounded. */
export interface McpToolResult {
  readonly content: readonly McpContent[];
  readonly structuredContent?: unknown;
  /** Whether something was dropped at the limits. */
  readonly truncated: boolean;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** A text cut to `max` UTF-8 bytes (never inside a character). */
export function cutUtf8(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  const buf = Buffer.from(text).subarray(0, Math.max(0, max));
  return buf.toString('utf8').replace(/\uFFFD$/, '');
}

interface Budget {
  left: number;
  cut: boolean;
  /** Scrubs secrets from a text before it is cut (a secret cut in two would not be found later). */
  readonly redact: (text: string) => string;
}

function keep(raw: string, budget: Budget): string {
  const text = budget.redact(raw);
  const kept = cutUtf8(text, budget.left);
  budget.left -= Buffer.byteLength(kept);
  if (kept.length === text.length) return text;
  budget.cut = true;
  return `${kept}…`;
}

function block(raw: unknown, budget: Budget): McpContent | null {
  if (typeof raw !== 'object' || raw === null) return { type: 'other', kind: typeof raw };
  const b = raw as Record<string, unknown>;
  const kind = str(b.type) ?? 'unknown';
  if (kind === 'text') {
    return { type: 'text', text: keep(str(b.text) ?? '', budget) };
  }
  if (kind === 'image' || kind === 'audio') {
    const data = str(b.data) ?? '';
    return { type: 'binary', kind, mimeType: str(b.mimeType), bytes: Math.floor((data.length * 3) / 4) };
  }
  if (kind === 'resource') {
    const res = (b.resource ?? {}) as Record<string, unknown>;
    const text = str(res.text);
    if (text !== null) return { type: 'text', text: keep(text, budget) };
    const blob = str(res.blob) ?? '';
    return {
      type: 'binary',
      kind: 'resource',
      mimeType: str(res.mimeType),
      bytes: Math.floor((blob.length * 3) / 4),
    };
  }
  if (kind === 'resource_link') {
    return {
      type: 'resource_link',
      uri: cutUtf8(budget.redact(str(b.uri) ?? ''), 2048),
      name: str(b.name) ? cutUtf8(budget.redact(str(b.name) ?? ''), 256) : null,
    };
  }
  return { type: 'other', kind: cutUtf8(budget.redact(kind), 64) };
}

/**
 * Bounds a `tools/call` result. Guarantees: at most `maxContentBlocks` blocks; text (content and
 * resources) at most `maxResultBytes` in total, each text passed through `redact` before it is cut; `structuredContent` kept only when its JSON fits
 * what is left of that budget (otherwise dropped, `truncated` set); no binary payload is kept.
 */
export function boundResult(
  raw: unknown,
  limits: McpLimits,
  redact: (text: string) => string = (text) => text,
): McpToolResult & { readonly isError: boolean } {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const blocks = Array.isArray(r.content) ? r.content : [];
  const budget: Budget = { left: limits.maxResultBytes, cut: false, redact };
  const content: McpContent[] = [];
  for (const raw of blocks.slice(0, limits.maxContentBlocks)) {
    if (budget.left <= 0) {
      budget.cut = true;
      break;
    }
    const kept = block(raw, budget);
    if (kept !== null) content.push(kept);
  }
  const out: { content: McpContent[]; structuredContent?: unknown; truncated: boolean; isError: boolean } = {
    content,
    truncated: budget.cut || blocks.length > limits.maxContentBlocks,
    isError: r.isError === true,
  };
  if (r.structuredContent !== undefined) {
    const json = JSON.stringify(r.structuredContent) ?? 'null';
    if (Buffer.byteLength(json) <= budget.left) out.structuredContent = r.structuredContent;
    else out.truncated = true;
  }
  return out;
}
