import { z } from 'zod';
import { RootAccess } from './risk.ts';

/** A workspace root (DESIGN.md §5). Paths are absolute once loaded from config. */
export const WorkspaceRoot = z.strictObject({
  id: z.string().min(1),
  path: z.string().min(1),
  access: RootAccess,
  primary: z.boolean().default(false),
  source: z.enum(['workspace', 'user-grant', 'task']).default('workspace'),
  deny: z.array(z.string()).optional(),
});
export type WorkspaceRoot = z.infer<typeof WorkspaceRoot>;
