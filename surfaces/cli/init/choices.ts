import { UsageError } from '../io.ts';

/** The providers `snotra init --provider` names (what the question offers). */
export const INIT_PROVIDERS = [
  'ollama',
  'llama.cpp',
  'openai',
  'anthropic',
  'openai-compatible',
  'none',
] as const;
export type InitProvider = (typeof INIT_PROVIDERS)[number];

/** The API root each provider gets when `--base-url` is not given. */
export const DEFAULT_BASE_URL = {
  ollama: 'http://127.0.0.1:11434/v1',
  'llama.cpp': 'http://127.0.0.1:8080/v1',
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
} as const;

/** The model written for a hosted provider when `--model` is not given. */
export const DEFAULT_MODEL = { openai: 'gpt-4.1-mini', anthropic: 'claude-sonnet-4-5' } as const;

/** The variable a hosted provider's key is read from by default (a key people already export). */
export const DEFAULT_KEY_VARIABLE = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

/** The model flags of `snotra init`, as given (undefined: not given). */
export interface ModelFlags {
  readonly provider?: string | undefined;
  readonly baseUrl?: string | undefined;
  readonly model?: string | undefined;
  readonly apiKeyEnv?: string | undefined;
}

/** The model flags checked: each value valid, and only with a provider that takes it. */
export interface CheckedModelFlags {
  readonly provider: InitProvider | null;
  readonly baseUrl: string | null;
  readonly model: string | null;
  readonly apiKeyEnv: string | null;
}

/** The model config `snotra init` writes for the assistant (the `agents.<id>.model` shape). */
export interface InitModel {
  readonly provider: 'openai-compatible' | 'anthropic';
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: { readonly env: string };
  readonly timeoutMs?: number;
}

/** Printable ASCII without spaces, as model names are (`qwen2.5:7b`, `hf.co/org/name:Q4_K_M`). */
const MODEL_NAME = /^[\x21-\x7e]{1,200}$/;

/** Whether `name` may be written as a model name (and printed on a terminal as it is). */
export function isModelName(name: string): boolean {
  return MODEL_NAME.test(name);
}

/**
 * An API root as config takes it: http(s), no credentials, query or fragment; the value itself is
 * never repeated in the message (a pasted key or a password in it must not reach a terminal log).
 */
export function checkBaseUrl(value: string, where: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${where}: not a URL (expected an API root such as http://127.0.0.1:8080/v1)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${where}: expected an http:// or https:// URL`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError(
      `${where}: a URL with credentials is refused (the key goes in apiKey, see --api-key-env)`,
    );
  if (url.search !== '' || url.hash !== '')
    throw new UsageError(`${where}: the API root takes no query or fragment`);
  return value.replace(/\/+$/, '');
}

/**
 * Checks the model flags of `snotra init`: a known `--provider`, a valid `--base-url`, `--model`
 * and `--api-key-env`, the flags a provider needs and none it cannot take. Every error names
 * its flag.
 */
export function checkModelFlags(flags: ModelFlags): CheckedModelFlags {
  const provider = flags.provider === undefined ? null : providerName(flags.provider);
  const baseUrl = flags.baseUrl === undefined ? null : checkBaseUrl(flags.baseUrl, '--base-url');
  if (flags.model !== undefined && !isModelName(flags.model))
    throw new UsageError('--model: expected a model name (1 to 200 printable characters, no spaces)');
  const model = flags.model ?? null;
  const apiKeyEnv = flags.apiKeyEnv === undefined ? null : keyVariable(flags.apiKeyEnv);
  const given = [
    ['--base-url', baseUrl],
    ['--model', model],
    ['--api-key-env', apiKeyEnv],
  ] as const;
  for (const [flag, value] of given) {
    if (value === null) continue;
    if (provider === null) throw new UsageError(`${flag} needs --provider (${INIT_PROVIDERS.join(', ')})`);
    if (provider === 'none')
      throw new UsageError(`${flag} cannot go with --provider none (no model is written)`);
  }
  if (provider === 'openai-compatible') {
    if (baseUrl === null)
      throw new UsageError('--provider openai-compatible needs --base-url (the API root)');
    if (model === null)
      throw new UsageError('--provider openai-compatible needs --model (the name the server knows)');
  }
  return { provider, baseUrl, model, apiKeyEnv };
}

function providerName(value: string): InitProvider {
  const name = value.trim().toLowerCase();
  if (name === 'llamacpp' || name === 'llama-cpp') return 'llama.cpp';
  const known = INIT_PROVIDERS.find((p) => p === name);
  if (known === undefined)
    throw new UsageError(
      `--provider: ${isModelName(value) ? `"${value}"` : 'the value'} is not one of ${INIT_PROVIDERS.join(', ')}`,
    );
  return known;
}

function keyVariable(name: string): string {
  if (name.toUpperCase().startsWith('SNOTRA_'))
    throw new UsageError(
      "--api-key-env: SNOTRA_* variables are the runtime's own; name the variable holding the key",
    );
  if (!/^[A-Z][A-Z0-9_]{0,119}_API_KEY$/.test(name))
    throw new UsageError('--api-key-env: expected a variable named like an API key, e.g. OPENAI_API_KEY');
  return name;
}

/**
 * The model config written for a provider (`none` writes none). Local servers get no key unless
 * `--api-key-env` names one, and a long silence limit (a local model may take minutes to load);
 * OpenAI and Anthropic read the key people already export.
 */
export function initModel(
  provider: Exclude<InitProvider, 'none'>,
  choice: { readonly baseUrl: string | null; readonly model: string; readonly apiKeyEnv: string | null },
): InitModel {
  const key = (fallback: string | null) => {
    const env = choice.apiKeyEnv ?? fallback;
    return env === null ? {} : { apiKey: { env } };
  };
  switch (provider) {
    case 'ollama':
    case 'llama.cpp':
      return {
        provider: 'openai-compatible',
        baseUrl: choice.baseUrl ?? DEFAULT_BASE_URL[provider],
        model: choice.model,
        ...key(null),
        timeoutMs: 600_000,
      };
    case 'openai':
      return {
        provider: 'openai-compatible',
        baseUrl: choice.baseUrl ?? DEFAULT_BASE_URL.openai,
        model: choice.model,
        ...key(DEFAULT_KEY_VARIABLE.openai),
      };
    case 'anthropic':
      return {
        provider: 'anthropic',
        baseUrl: choice.baseUrl ?? DEFAULT_BASE_URL.anthropic,
        model: choice.model,
        ...key(DEFAULT_KEY_VARIABLE.anthropic),
      };
    case 'openai-compatible':
      if (choice.baseUrl === null) throw new UsageError('--provider openai-compatible needs --base-url');
      return { provider: 'openai-compatible', baseUrl: choice.baseUrl, model: choice.model, ...key(null) };
  }
}
