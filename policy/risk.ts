import { z } from 'zod';

/** How much a tool can change the world. Ordered from least to most dangerous in practice. */
export const ToolRisk = z.enum(['read', 'write-local', 'exec', 'external']);
export type ToolRisk = z.infer<typeof ToolRisk>;

/** The global permission mode of an agent (DESIGN.md §4). */
export const Mode = z.enum(['allow', 'ask', 'deny']);
export type Mode = z.infer<typeof Mode>;

/** Strictness order of modes: a larger number grants less. */
export const MODE_STRICTNESS: Readonly<Record<Mode, number>> = { allow: 0, ask: 1, deny: 2 };

/** The stricter of two modes. */
export function stricterMode(a: Mode, b: Mode): Mode {
  return MODE_STRICTNESS[a] >= MODE_STRICTNESS[b] ? a : b;
}

/** Whether a run has a human at hand (attended) or parks approvals in the Inbox (unattended). */
export const Interaction = z.enum(['attended', 'unattended']);
export type Interaction = z.infer<typeof Interaction>;

/** Access a root grants. */
export const RootAccess = z.enum(['read', 'read-write']);
export type RootAccess = z.infer<typeof RootAccess>;

/** The access a single path argument needs. */
export type PathAccess = 'read' | 'write';
