import type { Mode } from '../../policy/risk.ts';

/** What the runtime's preamble states: who the agent is and what it may do now. */
export interface PreambleFacts {
  readonly agentId: string;
  readonly mode: Mode;
  readonly roots: readonly { readonly path: string; readonly access: string; readonly primary?: boolean }[];
  readonly tools: readonly string[];
}

const MODE_TEXT: Readonly<Record<Mode, string>> = {
  allow: 'allow (calls inside the rules and roots run without asking; hard limits still apply)',
  ask: 'ask (reads run at once; writes, shell commands and external calls wait for a human)',
  deny: 'deny (every tool call is refused)',
};

/**
 * The system prompt of a model step: the runtime's short preamble (the agent, its mode, its
 * roots and their access, its tools), then the agent's configured `instructions`, if any. Pure:
 * the same facts give the same text, so a resumed run sends what it sent before.
 */
export function systemPrompt(facts: PreambleFacts, instructions: string | undefined): string {
  const roots =
    facts.roots.length === 0
      ? ['- (none)']
      : facts.roots.map((r) => `- ${r.path} (${r.access}${r.primary === true ? ', primary' : ''})`);
  const lines = [
    `You are the agent "${facts.agentId}" of Snotra Runtime, working for the user through tools.`,
    `Mode: ${MODE_TEXT[facts.mode]}.`,
    'Workspace roots (relative paths resolve against the primary one):',
    ...roots,
    `Tools: ${facts.tools.length === 0 ? '(none)' : facts.tools.join(', ')}.`,
    'The runtime checks every tool call against its policy; a refused call comes back with the reason.',
  ];
  const own = instructions?.trim() ?? '';
  return own === '' ? lines.join('\n') : `${lines.join('\n')}\n\n${own}`;
}
