import type { CommandSpec } from '../command-spec.ts';

/** `snotra init`: the starter config, with the assistant's model (asked on a terminal). */
export const INIT_SPEC: CommandSpec = {
  path: ['init'],
  summary: 'write a starter snotra.config.json with your model (and ignore the state dir in git)',
  usage:
    '[--config F] [--state-dir D] [--force] [--provider P] [--model M] [--base-url URL] [--api-key-env VAR]',
  options: [
    ['--config F', 'where to write the config (default ./snotra.config.json)'],
    ['--state-dir D', 'the stateDir to write (default: outside the workspace)'],
    ['--force', 'overwrite an existing config'],
    [
      '--provider P',
      'ollama, llama.cpp, openai, anthropic, openai-compatible or none (default on a terminal: asked)',
    ],
    [
      '--model M',
      'the model name (default: the first a local server lists; gpt-4.1-mini; claude-sonnet-4-5)',
    ],
    ['--base-url URL', "the API root (default: the provider's; required for openai-compatible)"],
    [
      '--api-key-env VAR',
      'the variable holding the key, e.g. GROQ_API_KEY (default OPENAI_API_KEY / ANTHROPIC_API_KEY)',
    ],
  ],
  examples: [
    'snotra init',
    'snotra init --provider ollama',
    'snotra init --provider openai --model gpt-4.1-mini',
    'snotra init --provider openai-compatible --base-url http://127.0.0.1:1234/v1 --model qwen2.5-7b',
  ],
  run: async (argv, io, cwd) => (await import('../init.ts')).initCommand(argv, io, cwd),
};
