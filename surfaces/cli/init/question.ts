import { UsageError } from '../io.ts';
import type { ApprovalTerminal } from '../run/prompt.ts';
import { checkBaseUrl, DEFAULT_MODEL, initModel, isModelName, type InitModel } from './choices.ts';
import { detectLocalServers, type DetectEnv, type Detected } from './detect.ts';

/** One line of the provider menu and the model it leads to (null: no model). */
interface Offer {
  readonly label: string;
  readonly pick: (term: ApprovalTerminal) => Promise<{ readonly model: InitModel | null } | null>;
}

const MAX_TRIES = 3;
const never = new AbortController().signal;

/**
 * Asks `question` until `parse` accepts the answer (it returns an error text otherwise), three
 * times at most. Null on end of input, Ctrl-C or three refused answers: the caller writes nothing.
 */
async function askUntil<T>(
  term: ApprovalTerminal,
  question: string,
  parse: (answer: string) => { ok: T } | { error: string },
): Promise<T | null> {
  for (let i = 0; i < MAX_TRIES; i++) {
    const line = await term.ask(question, never);
    if (line === null) return null;
    const parsed = parse(line.trim());
    if ('ok' in parsed) return parsed.ok;
    term.write(`  ${parsed.error}\n`);
  }
  return null;
}

/** A number from 1 to `n`; Enter takes 1. */
function choiceOf(n: number) {
  return (answer: string): { ok: number } | { error: string } => {
    if (answer === '') return { ok: 0 };
    const k = /^\d{1,3}$/.test(answer) ? Number(answer) : NaN;
    return k >= 1 && k <= n ? { ok: k - 1 } : { error: `type a number from 1 to ${n}` };
  };
}

const modelName =
  (fallback: string | null) =>
  (answer: string): { ok: string } | { error: string } => {
    const name = answer === '' ? fallback : answer;
    if (name === null) return { error: 'type the model name the server knows' };
    return isModelName(name)
      ? { ok: name }
      : { error: 'a model name is 1 to 200 printable characters, no spaces' };
  };

/** The menu line of a server that answered, and what choosing it asks next. */
function localOffer(found: Extract<Detected, { kind: 'found' }>): Offer {
  const name = found.server === 'ollama' ? 'Ollama' : 'llama.cpp server';
  const shown = found.models.slice(0, 3).join(', ') + (found.models.length > 3 ? ', …' : '');
  return {
    label: `${name} at ${found.baseUrl} (${found.models.length === 0 ? 'no model listed' : shown})`,
    pick: async (term) => {
      let model: string | null;
      if (found.models.length === 1) model = found.models[0] ?? null;
      else if (found.models.length === 0) model = await askUntil(term, '  Model name: ', modelName(null));
      else {
        found.models.forEach((m, i) => term.write(`  ${i + 1}) ${m}\n`));
        const k = await askUntil(
          term,
          `  Which model? [1-${found.models.length}, Enter for 1] `,
          choiceOf(found.models.length),
        );
        model = k === null ? null : (found.models[k] ?? null);
      }
      if (model === null) return null;
      return { model: initModel(found.server, { baseUrl: found.baseUrl, model, apiKeyEnv: null }) };
    },
  };
}

function hostedOffer(provider: 'openai' | 'anthropic'): Offer {
  const label =
    provider === 'openai' ? 'OpenAI (key from OPENAI_API_KEY)' : 'Anthropic (key from ANTHROPIC_API_KEY)';
  return {
    label,
    pick: async (term) => {
      const fallback = DEFAULT_MODEL[provider];
      const model = await askUntil(term, `  Model [${fallback}]: `, modelName(fallback));
      return model === null
        ? null
        : { model: initModel(provider, { baseUrl: null, model, apiKeyEnv: null }) };
    },
  };
}

const otherOffer: Offer = {
  label: 'Another OpenAI-compatible server (its URL)',
  pick: async (term) => {
    const baseUrl = await askUntil<string>(term, '  API root (e.g. http://127.0.0.1:1234/v1): ', (answer) => {
      try {
        return { ok: checkBaseUrl(answer, 'the API root') };
      } catch (err) {
        if (err instanceof UsageError) return { error: err.message };
        throw err;
      }
    });
    if (baseUrl === null) return null;
    const model = await askUntil<string>(term, '  Model: ', modelName(null));
    if (model === null) return null;
    const key = await askUntil<string>(
      term,
      '  Variable holding its key, e.g. GROQ_API_KEY (Enter for none): ',
      (a) =>
        a === '' || /^[A-Z][A-Z0-9_]{0,119}_API_KEY$/.test(a)
          ? { ok: a }
          : { error: 'a variable named like an API key (ending in _API_KEY), or Enter for none' },
    );
    if (key === null) return null;
    return {
      model: initModel('openai-compatible', { baseUrl, model, apiKeyEnv: key === '' ? null : key }),
    };
  },
};

const noneOffer: Offer = {
  label: 'None for now (add agents.assistant.model later)',
  pick: async () => ({ model: null }),
};

/**
 * The provider question of `snotra init` on a terminal: looks for Ollama and a llama.cpp server
 * (both at once, within `timeoutMs`), offers what answered first, then OpenAI, Anthropic, any
 * OpenAI-compatible URL, or none; asks for the model where there is a choice. Null when the
 * question got no valid answer (end of input, Ctrl-C, three refused answers).
 */
export async function askProvider(
  term: ApprovalTerminal,
  env: DetectEnv,
  timeoutMs: number,
): Promise<{ readonly model: InitModel | null } | null> {
  term.write('Looking for a local model server (Ollama, llama.cpp)…\n');
  const detected = await detectLocalServers(env, timeoutMs);
  const offers: Offer[] = [];
  for (const d of detected) {
    if (d.kind === 'found') offers.push(localOffer(d));
    else term.write(`  no ${d.server === 'ollama' ? 'Ollama' : 'llama.cpp server'}: ${d.why}\n`);
  }
  offers.push(hostedOffer('openai'), hostedOffer('anthropic'), otherOffer, noneOffer);
  term.write('Which model provider should the assistant use?\n');
  offers.forEach((o, i) => term.write(`  ${i + 1}) ${o.label}\n`));
  const k = await askUntil(term, `Choose [1-${offers.length}, Enter for 1]: `, choiceOf(offers.length));
  const offer = k === null ? undefined : offers[k];
  return offer === undefined ? null : offer.pick(term);
}
