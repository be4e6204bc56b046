import { UsageError } from '../io.ts';
import { checkBaseUrl, DEFAULT_BASE_URL, isModelName } from './choices.ts';

/** The local servers `snotra init` looks for. */
export type LocalServer = 'ollama' | 'llama.cpp';

/**
 * Where `snotra init` looks for each local server: the server's address (scheme, host, port),
 * overridable by a variable (for a server on another port, and for tests).
 */
export const LOCAL_SERVER_VARIABLE = {
  ollama: 'SNOTRA_INIT_OLLAMA_URL',
  'llama.cpp': 'SNOTRA_INIT_LLAMACPP_URL',
} as const satisfies Record<LocalServer, string>;

/** The variables that move detection (read from the environment `snotra init` runs in). */
export type DetectEnv = Readonly<Partial<Record<(typeof LOCAL_SERVER_VARIABLE)[LocalServer], string>>>;

/** What a probe of one local server found. */
export type Detected =
  | {
      readonly kind: 'found';
      readonly server: LocalServer;
      /** The API root to write as `baseUrl` (`…/v1`). */
      readonly baseUrl: string;
      /** The model names it lists, in its order (names that are not plain printable text left out). */
      readonly models: readonly string[];
    }
  | { readonly kind: 'absent'; readonly server: LocalServer; readonly baseUrl: string; readonly why: string };

/** The longest listing read: a local server's model list is a few KiB. */
const MAX_BODY = 1 << 20;

/** The API root where `server` is looked for: its variable's address + `/v1`, else the default. */
export function detectionRoot(server: LocalServer, env: DetectEnv): string {
  const variable = LOCAL_SERVER_VARIABLE[server];
  const value = env[variable];
  if (value === undefined || value === '') return DEFAULT_BASE_URL[server];
  return `${checkBaseUrl(value, `the environment variable ${variable}`)}/v1`;
}

/** What is asked of a server: Ollama's own listing, or the OpenAI-style one llama.cpp serves. */
function listingUrl(server: LocalServer, baseUrl: string): string {
  return server === 'ollama' ? `${baseUrl.replace(/\/v1$/, '')}/api/tags` : `${baseUrl}/models`;
}

/** The model names of a listing body, or null when it is not the server's shape. */
function modelNames(server: LocalServer, body: unknown): string[] | null {
  const list = server === 'ollama' ? field(body, 'models') : field(body, 'data');
  if (!Array.isArray(list)) return null;
  const key = server === 'ollama' ? 'name' : 'id';
  return list.map((m) => field(m, key)).filter((n): n is string => typeof n === 'string' && isModelName(n));
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

async function readCapped(res: Response): Promise<string | null> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Asks one local server for its models (`GET /api/tags` for Ollama, `GET /v1/models` for a
 * llama.cpp server) within `timeoutMs`. Never throws: a server that does not answer, answers with
 * an error, or answers something else is `absent` with the reason in words.
 */
export async function probe(server: LocalServer, baseUrl: string, timeoutMs: number): Promise<Detected> {
  const url = listingUrl(server, baseUrl);
  const absent = (why: string): Detected => ({ kind: 'absent', server, baseUrl, why });
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch {
    return absent(`nothing answers GET ${url} within ${Math.round(timeoutMs / 1000)} s`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    return absent(`GET ${url} answered HTTP ${res.status}`);
  }
  let body: unknown;
  try {
    const text = await readCapped(res);
    if (text === null) return absent(`GET ${url} answered more than 1 MiB`);
    body = JSON.parse(text);
  } catch {
    return absent(`GET ${url} answered something that is not a JSON model list`);
  }
  const models = modelNames(server, body);
  if (models === null) return absent(`GET ${url} answered JSON that is not a model list`);
  return { kind: 'found', server, baseUrl, models };
}

/** Both local servers probed at once, at their addresses (`SNOTRA_INIT_*_URL` or the defaults). */
export async function detectLocalServers(env: DetectEnv, timeoutMs: number): Promise<readonly Detected[]> {
  const servers: LocalServer[] = ['ollama', 'llama.cpp'];
  const roots = servers.map((s) => {
    try {
      return detectionRoot(s, env);
    } catch (err) {
      // A bad address variable is the user's to fix; the question still offers the rest.
      if (err instanceof UsageError) return err;
      throw err;
    }
  });
  return Promise.all(
    servers.map((s, i) => {
      const root = roots[i];
      return root instanceof UsageError || root === undefined
        ? Promise.resolve<Detected>({ kind: 'absent', server: s, baseUrl: '', why: root?.message ?? '' })
        : probe(s, root, timeoutMs);
    }),
  );
}
