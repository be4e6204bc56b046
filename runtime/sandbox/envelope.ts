/**
 * From an authority envelope to what its sandbox mounts: the envelope's own roots with their
 * access, and the network only when the envelope grants `external` risk.
 */
import type { Confinement } from '../../actors/tools/process-runner.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { Mode } from '../../policy/risk.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import { strictestRule, type ToolRule } from '../../policy/rules.ts';

/** The parts of an envelope (`AuthorityEnvelope`) a confinement depends on. */
export interface EnvelopeView {
  readonly mode: Mode;
  readonly tools: readonly string[];
  readonly rules: readonly ToolRule[];
  readonly roots: readonly Pick<WorkspaceRoot, 'path' | 'access' | 'deny'>[];
}

/**
 * Whether `envelope` grants `external` risk: its mode is not `deny` and it holds at least one
 * registered tool of risk `external` that no rule of the envelope denies.
 */
export function envelopeGrantsNetwork(envelope: EnvelopeView, registry: ToolRegistry): boolean {
  if (envelope.mode === 'deny') return false;
  return envelope.tools.some((name) => {
    const tool = registry.get(name);
    if (tool?.status !== 'ok' || tool.metadata.risk !== 'external') return false;
    return strictestRule(envelope.rules, name, tool.metadata)?.effect !== 'deny';
  });
}

/** The confinement of a run with `envelope`. */
export function confinementOf(envelope: EnvelopeView, registry: ToolRegistry): Confinement {
  return {
    roots: envelope.roots.map((r) => ({
      path: r.path,
      access: r.access,
      ...(r.deny ? { deny: r.deny } : {}),
    })),
    network: envelopeGrantsNetwork(envelope, registry),
  };
}
