import { z } from 'zod';
import { RootAccess } from '../../../policy/risk.ts';
import { Comment, PathText } from './common.ts';

const Root = z.strictObject({
  $comment: Comment,
  id: z.string().min(1).describe('A stable name of this root, e.g. "workspace" or "docs".'),
  path: PathText.describe(
    'The folder, relative to this config file\'s folder; "~" and "~/..." name the home folder. Example: ".".',
  ),
  access: RootAccess.describe('What tools may do inside: "read" or "read-write".'),
  primary: z
    .boolean()
    .optional()
    .describe(
      'The root relative tool paths resolve against (default: the first root; a single root is always primary).',
    ),
  source: z
    .enum(['workspace', 'user-grant', 'task'])
    .optional()
    .describe('Why the root exists: "workspace" (default), "user-grant" or "task".'),
  deny: z
    .array(PathText)
    .optional()
    .describe(
      'Paths inside this root that no tool may touch, relative to the root, e.g. ["secrets", ".env"].',
    ),
});

/** The `workspace` section: the folders the agents work in (default: the config's folder, read-write). */
export const WorkspaceSection = z
  .strictObject({
    roots: z
      .array(Root)
      .min(1)
      .describe('The folders tools may use (at least one); everything outside them is out of reach.'),
  })
  .default({ roots: [{ id: 'workspace', path: '.', access: 'read-write', primary: true }] })
  .describe("The folders the agents work in. Default: this config's folder, read-write.");
