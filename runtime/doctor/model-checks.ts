/**
 * `snotra doctor`'s model checks: for each agent with a network model, that its key resolves
 * (naming what to set when it does not) and that the API answers a models listing with that key.
 * No key value is ever shown; the key goes in a header, never in the URL.
 */
import { secretStoreFromConfig } from '../config/adapters/secrets.ts';
import type { LoadedConfig } from '../config/load.ts';
import { readReference, referenceLabel, whereToSet } from '../secrets/reference.ts';
import type { DoctorCheck } from './check.ts';

/** Options of `modelChecks`. */
export interface ModelCheckOptions {
  /** Where `{ "env" }` references read (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long one models listing may take (ms, default 10000). */
  readonly timeoutMs?: number;
}

type NetworkModel = {
  readonly provider: 'openai-compatible' | 'anthropic';
  readonly baseUrl?: string | undefined;
  readonly model?: string | undefined;
  readonly apiKey?: { secret: string } | { env: string } | undefined;
};

const DEFAULT_BASE = { 'openai-compatible': undefined, anthropic: 'https://api.anthropic.com/v1' } as const;

async function keyCheck(
  name: string,
  m: NetworkModel,
  loaded: LoadedConfig,
  env: ModelCheckOptions['env'],
): Promise<{ check: DoctorCheck; key: string | null }> {
  if (m.apiKey === undefined)
    return {
      check: { name, status: 'ok', detail: 'no API key configured (a local server needs none)' },
      key: null,
    };
  const ref = m.apiKey;
  const store = 'secret' in ref ? secretStoreFromConfig(loaded) : undefined;
  try {
    const key = await readReference(ref, store, env ?? process.env);
    if (key !== null) return { check: { name, status: 'ok', detail: `${referenceLabel(ref)} is set` }, key };
    return {
      check: {
        name,
        status: 'fail',
        detail: `${referenceLabel(ref)} is not set`,
        fix: whereToSet(ref, store),
      },
      key: null,
    };
  } catch (err) {
    return {
      check: {
        name,
        status: 'fail',
        detail: `${referenceLabel(ref)} cannot be read: ${(err as Error).message.split('\n')[0]}`,
        fix: `${whereToSet(ref, store)}; or set secrets.backend to "env"`,
      },
      key: null,
    };
  }
}

async function answerCheck(
  name: string,
  at: string,
  m: NetworkModel,
  key: string | null,
  timeoutMs: number,
): Promise<DoctorCheck> {
  const base = (m.baseUrl ?? DEFAULT_BASE[m.provider])?.replace(/\/+$/, '');
  if (base === undefined)
    return {
      name,
      status: 'fail',
      detail: 'no baseUrl',
      fix: `set ${at}.baseUrl (the API root, e.g. ending in /v1)`,
    };
  const headers: Record<string, string> =
    m.provider === 'anthropic'
      ? { 'anthropic-version': '2023-06-01', ...(key === null ? {} : { 'x-api-key': key }) }
      : key === null
        ? {}
        : { authorization: `Bearer ${key}` };
  let res: Response;
  try {
    res = await fetch(`${base}/models`, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const why = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return {
      name,
      status: 'fail',
      detail: `${base} does not answer (${why})`,
      fix: `start the model server, or correct ${at}.baseUrl`,
    };
  }
  const text = await res.text().catch(() => '');
  if (res.status === 401 || res.status === 403)
    return {
      name,
      status: 'fail',
      detail: `${base}/models: HTTP ${res.status}, the key was refused`,
      fix: `check ${at}.apiKey`,
    };
  if (!res.ok)
    return {
      name,
      status: 'warn',
      detail: `${base}/models: HTTP ${res.status} (some servers have no models listing)`,
      fix: `check ${at}.baseUrl: the API root, e.g. ending in /v1`,
    };
  const listed = m.model !== undefined && text.includes(JSON.stringify(m.model));
  return listed || m.model === undefined
    ? { name, status: 'ok', detail: `${base} answers${listed ? `; model "${m.model}" is listed` : ''}` }
    : {
        name,
        status: 'warn',
        detail: `${base} answers, but does not list model "${m.model}"`,
        fix: `check ${at}.model against ${base}/models`,
      };
}

/**
 * One key check and one answer check per agent with an `openai-compatible` or `anthropic` model;
 * a `warn` when no agent has a model at all (`snotra run` then has nothing to ask).
 */
export async function modelChecks(
  loaded: LoadedConfig,
  options: ModelCheckOptions = {},
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const agents = Object.entries(loaded.config.agents);
  if (!agents.some(([, a]) => a.model !== undefined))
    checks.push({
      name: 'model',
      status: 'warn',
      detail: 'no agent has a model, so snotra run has nothing to ask',
      fix: 'snotra init --force --provider ollama|llama.cpp|openai|anthropic|openai-compatible writes one; or add agents.<id>.model to the config (docs/models.md)',
    });
  for (const [id, a] of agents) {
    const m = a.model;
    if (m === undefined || (m.provider !== 'openai-compatible' && m.provider !== 'anthropic')) continue;
    const net = m as NetworkModel;
    const { check, key } = await keyCheck(`agent ${id}: key`, net, loaded, options.env);
    checks.push(check);
    if (check.status === 'fail') continue;
    checks.push(
      await answerCheck(`agent ${id}: model`, `agents.${id}.model`, net, key, options.timeoutMs ?? 10_000),
    );
  }
  return checks;
}
