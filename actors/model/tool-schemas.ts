import { z } from 'zod';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { ModelTool } from './provider.ts';

/** What each built-in tool does, as the model is told. */
const DESCRIPTIONS: Readonly<Record<string, string>> = {
  read_file: 'Read a text file inside the workspace. Optional 1-based startLine/endLine select a range.',
  list_dir: 'List the entries of a directory inside the workspace.',
  search_files: 'Search the files under a directory for a regular expression pattern.',
  write_file: 'Create or replace a file inside the workspace with the given content.',
  edit_file: 'Replace the exact text `old` with `new` in a file inside the workspace.',
  shell: 'Run a shell command, optionally in a working directory inside the workspace.',
  git_query: 'Run a read-only git command: log, status, diff or show, with its arguments.',
  http_request: 'Send an HTTP request and return the status, headers and body.',
  send_message: 'Send a text message to a channel.',
  spawn_agent: 'Start a sub-agent of a configured profile on a task, with narrowed tools and roots.',
  goal_status: 'Show the goal you work on: its objective, the iteration and the budget left.',
  goal_complete:
    'Claim that the goal is complete, with the evidence that it is. The goal ends when this run ends; a human can check the claim.',
  request_directory_access:
    'Ask the user for read or read-write access to a directory outside the workspace.',
};

const ANY_OBJECT = { type: 'object', additionalProperties: true } as const;

/**
 * Generated schemas by zod schema: generating one costs more than the rest of a model step's
 * set-up (6 % of a park in the profile), and a tool's schema never changes while it is
 * registered. Frozen, so no caller can change what the next run is offered.
 */
const generated = new WeakMap<z.ZodType, Readonly<Record<string, unknown>>>();

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v)) deepFreeze(child);
  }
  return v;
}

/** The JSON Schema of a tool's arguments (input side), without the `$schema` marker. */
export function argumentSchema(schema: z.ZodType | null): Record<string, unknown> {
  if (schema === null) return { ...ANY_OBJECT };
  const known = generated.get(schema);
  if (known !== undefined) return known as Record<string, unknown>;
  const out = deepFreeze(generate(schema));
  generated.set(schema, out);
  return out;
}

function generate(schema: z.ZodType): Record<string, unknown> {
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return { ...ANY_OBJECT };
  }
  const { $schema: _drop, ...rest } = json;
  return rest.type === 'object' ? rest : { ...ANY_OBJECT };
}

/**
 * The tools a model is offered for a run: exactly the tools the agent is granted (`granted`,
 * null meaning every registered tool), each with the JSON Schema generated from its zod
 * argument schema. Tools without trusted metadata are offered too (the policy asks a human
 * for every call of theirs) with a schema accepting any object. Sorted by name.
 */
export function modelTools(registry: ToolRegistry, granted: ReadonlySet<string> | null): ModelTool[] {
  const names = (granted === null ? registry.names() : [...granted]).sort();
  const out: ModelTool[] = [];
  for (const name of names) {
    const tool = registry.get(name);
    if (tool === undefined) continue;
    out.push({
      name,
      description:
        DESCRIPTIONS[name] ??
        `The ${tool.status === 'ok' ? tool.metadata.source : tool.source} tool ${name}.`,
      parameters: argumentSchema(tool.status === 'ok' ? tool.args : null),
    });
  }
  return out;
}

/**
 * Tool names as a provider's API accepts them (`^[A-Za-z0-9_-]{1,64}$`): other characters
 * become `_` (`mcp:fs:read` → `mcp_fs_read`), collisions get a numeric suffix. Names come
 * back through `fromWire`; a name the model made up is passed on unchanged, and the policy
 * denies it as `tool_not_found`.
 */
const VALID = /^[A-Za-z0-9_-]{1,64}$/;

export class WireNames {
  readonly #toWire = new Map<string, string>();
  readonly #fromWire = new Map<string, string>();

  constructor(names: Iterable<string>) {
    const all = [...names];
    // Names that are already valid keep themselves; the others are fitted around them.
    for (const name of all) if (VALID.test(name)) this.toWire(name);
    for (const name of all) this.toWire(name);
  }

  toWire(name: string): string {
    const known = this.#toWire.get(name);
    if (known !== undefined) return known;
    const base = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
    let wire = VALID.test(name) && !this.#fromWire.has(name) ? name : base;
    for (let n = 2; this.#fromWire.has(wire); n++) wire = `${base.slice(0, 60)}_${n}`;
    this.#toWire.set(name, wire);
    this.#fromWire.set(wire, name);
    return wire;
  }

  fromWire(wire: string): string {
    return this.#fromWire.get(wire) ?? wire;
  }
}
