import { ModelErrorCode, ModelProviderError } from './errors.ts';
import { isRetryableStatus, type RetryPolicy } from './http.ts';
import { MODEL_LIMITS } from './limits.ts';
import type { ModelStepRequest } from './provider.ts';
import type { SecretReference } from '../tools/types.ts';
import type { ModelPrice } from './usage.ts';

/** A header value in config: plain text, or a secret resolved at request time. */
export type HeaderValue = string | SecretReference;

/** Settings of a network model provider (`agents.<id>.model` in config). */
export interface HttpModelSettings {
  /** The API root, e.g. `https://api.openai.com/v1`; the endpoint path is appended. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: SecretReference;
  readonly headers?: Readonly<Record<string, HeaderValue>>;
  /** Longest silence before the answer starts or between two chunks (ms); default 120000. */
  readonly timeoutMs?: number;
  /** Retries of a failed attempt before the first streamed byte; default 2. */
  readonly maxRetries?: number;
  readonly temperature?: number;
  /** US dollars per million input and output tokens; a step's usage then carries its cost. */
  readonly price?: ModelPrice;
  /** Output token limit of one step; required by Anthropic (default 4096), optional elsewhere. */
  readonly maxTokens?: number;
  /** First retry backoff (ms) when the server gives no `Retry-After`; default 500. */
  readonly retryBaseMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 2;

/** The retry policy of one step. */
export function retryPolicy(settings: HttpModelSettings, request: ModelStepRequest): RetryPolicy {
  return {
    maxRetries: settings.maxRetries ?? DEFAULT_MAX_RETRIES,
    timeoutMs: settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    baseDelayMs: settings.retryBaseMs ?? 500,
    ...(request.signal ? { signal: request.signal } : {}),
  };
}

/** The endpoint URL: `baseUrl` without trailing slashes, then `path`. */
export function endpoint(settings: HttpModelSettings, path: string): string {
  return `${settings.baseUrl.replace(/\/+$/, '')}${path}`;
}

/** How a reference reads in a message. */
function label(ref: SecretReference): string {
  return 'env' in ref ? `environment variable ${ref.env}` : `secret "${ref.secret}"`;
}

async function resolveSecret(request: ModelStepRequest, ref: SecretReference, what: string): Promise<string> {
  if (request.secrets === undefined) {
    throw new ModelProviderError(
      ModelErrorCode.config,
      `${what} names ${label(ref)} but the runtime has no secret resolver (set secrets.backend)`,
    );
  }
  try {
    return await request.secrets.resolve(ref);
  } catch (err) {
    // Secret store messages name the secret and the backend, never a value.
    throw new ModelProviderError(
      ModelErrorCode.config,
      `cannot read ${what}: ${(err as Error).message}`,
      {},
      {
        cause: err,
      },
    );
  }
}

/**
 * The request headers: the configured extra headers (secrets resolved now), then the key in
 * the provider's own header (`keyHeaders`), which configured headers cannot replace.
 */
export async function requestHeaders(
  settings: HttpModelSettings,
  request: ModelStepRequest,
  keyHeaders: (key: string | null) => Record<string, string>,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(settings.headers ?? {})) {
    out[name.toLowerCase()] =
      typeof value === 'string' ? value : await resolveSecret(request, value, `model header ${name}`);
  }
  const key =
    settings.apiKey === undefined ? null : await resolveSecret(request, settings.apiKey, 'the model API key');
  const headers = { ...out, ...keyHeaders(key), 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(headers)) {
    // A value fetch would refuse (a pasted key with a line break) is named here, not as a network error.
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value))
      throw new ModelProviderError(
        ModelErrorCode.config,
        `the model request header ${name} has a line break or another character HTTP does not allow (check the secret it comes from)`,
      );
  }
  return headers;
}

/** What to check for an HTTP status, in the user's words. */
function hint(status: number, settings: HttpModelSettings): string {
  const key = settings.apiKey ? `the API key in ${label(settings.apiKey)}` : 'model.apiKey (none is set)';
  if (status === 401) return `check ${key}`;
  if (status === 403) return `check that ${key} may use model "${settings.model}"`;
  if (status === 404)
    return `check model.baseUrl (the API root, e.g. ending in /v1) and model "${settings.model}"`;
  if (status === 400 || status === 422)
    return `check model "${settings.model}" and that the server supports tool calling (llama.cpp needs --jinja)`;
  if (status === 429) return 'the server is rate limiting or the account is out of quota: check its limits';
  if (status === 529) return 'the provider is overloaded: try again later';
  if (status >= 500) return 'the model server failed: check its logs';
  return 'check model.baseUrl and model';
}

/** Picks the provider's error code and message out of an error body (several server dialects). */
export function parseErrorBody(body: string): { code: string | null; message: string | null } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { code: null, message: null };
  }
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  const obj = json as { error?: unknown; message?: unknown; type?: unknown } | null;
  if (obj === null || typeof obj !== 'object') return { code: null, message: null };
  if (typeof obj.error === 'string') return { code: null, message: obj.error };
  const e = obj.error as { code?: unknown; type?: unknown; message?: unknown } | undefined;
  if (e !== null && typeof e === 'object') {
    const code = typeof e.code === 'number' ? String(e.code) : (str(e.code) ?? str(e.type));
    return { code, message: str(e.message) };
  }
  return { code: null, message: str(obj.message) };
}

/** Shortens a provider's message and strips anything that looks like a credential. */
export function providerMessage(message: string | null): string | null {
  if (message === null) return null;
  const clean = message
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\b(sk|pk|rk|key|sess)[-_][A-Za-z0-9*_.-]{4,}/gi, '[REDACTED]')
    .replace(/\b[A-Za-z0-9_-]{32,}\b/g, '[REDACTED]');
  return clean.length > MODEL_LIMITS.providerMessageChars
    ? `${clean.slice(0, MODEL_LIMITS.providerMessageChars)}…`
    : clean;
}

/**
 * The error of an HTTP failure: `<label> answered HTTP <status> (<provider code>): <message>;
 * <what to check>`. For 401/403 the provider's message is left out (some echo part of the key).
 */
export function httpError(
  label: string,
  settings: HttpModelSettings,
  status: number,
  body: string,
  retryAfterMs: number | null,
  dialect: (body: string) => { code: string | null; message: string | null } = parseErrorBody,
): ModelProviderError {
  const { code, message } = dialect(body);
  const shown = status === 401 || status === 403 ? null : providerMessage(message);
  const text = `${label} answered HTTP ${status}${code ? ` (${code})` : ''}${shown ? `: ${shown}` : ''}; ${hint(status, settings)}`;
  return new ModelProviderError(ModelErrorCode.http, text, {
    status,
    providerCode: code,
    retryable: isRetryableStatus(status),
    retryAfterMs,
  });
}

/** A label naming the server without its path, query or credentials (e.g. `api.openai.com`). */
export function serverLabel(settings: HttpModelSettings): string {
  try {
    return `the model server ${new URL(settings.baseUrl).host}`;
  } catch {
    return 'the model server';
  }
}
