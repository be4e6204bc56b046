import { z } from 'zod';
import { McpAnnotations, McpOverride } from '../../policy/mcp.ts';
import { ToolSecurityMetadata } from '../../policy/metadata.ts';
import { PathRuleInput } from '../../policy/paths/index.ts';
import { RuleExamples } from '../../policy/rule-examples.ts';
import { ToolRule } from '../../policy/rules.ts';

/**
 * Editor help for config fields whose zod schemas live in policy/ (rules, sensitive-path entries,
 * MCP annotations, tool metadata): descriptions keyed by the field's schema, added to the JSON
 * Schema when it is generated (json-schema.ts). Documentation only: validation is unchanged. Keys
 * must be schemas of one field only (`ToolRule.shape.risk` is its own `optional()`), never a
 * schema shared by several fields such as `ToolRisk`.
 */
export const POLICY_FIELD_DESCRIPTIONS = new Map<z.ZodType, string>([
  [
    ToolRule.shape.id,
    'A stable id of the rule (lowercase letters, digits, ".", "_", "-"), named in decisions and audit.',
  ],
  [ToolRule.shape.tool, 'A tool name, or a prefix ending in "*", e.g. "shell" or "mcp:github:*".'],
  [ToolRule.shape.risk, 'Matches tools of this risk: "read", "write-local", "exec" or "external".'],
  [ToolRule.shape.source, 'Matches tools from this source: "builtin", "extension", "skill" or "mcp".'],
  [
    ToolRule.shape.command,
    'For the shell tool: a program or command prefix, e.g. "git push" or "rm", matched on the analyzed commands.',
  ],
  [
    ToolRule.shape.path,
    'A glob relative to the workspace root that a resolved path argument falls in, e.g. "migrations/**".',
  ],
  [ToolRule.shape.access, 'With "path": whether the rule covers "read" or "write" targets (default: both).'],
  [
    ToolRule.shape.target,
    'A glob on an external tool\'s target argument (for a URL also its host), e.g. "*.example.com".',
  ],
  [ToolRule.shape.effect, 'What a match does: "ask" (needs approval) or "deny". Rules can never allow.'],
  [
    ToolRule.shape.examples,
    'Policy tests: what the rule must and must not match (commands, paths or targets, as its one matcher takes); a config whose rule does not behave as they say refuses to load. Run them with `snotra policy test`.',
  ],
  [RuleExamples.shape.match, 'Examples the rule must match for certain.'],
  [RuleExamples.shape.notMatch, 'Examples the rule must certainly not match.'],
  [PathRuleInput.shape.id, 'A dotted id, e.g. "sensitive.vault-data".'],
  [PathRuleInput.shape.description, 'Why these paths are sensitive, shown in decisions.'],
  [PathRuleInput.shape.patterns, 'Globs of the paths, e.g. ["~/vault/**"]; no negated patterns.'],
  [
    McpAnnotations.shape.readOnlyHint,
    'Server hint: the tool only reads (ignored: it cannot loosen the policy).',
  ],
  [
    McpAnnotations.shape.destructiveHint,
    'Server hint: the tool may destroy data (makes every call need approval).',
  ],
  [McpAnnotations.shape.idempotentHint, 'Server hint: repeating a call has no further effect (ignored).'],
  [McpAnnotations.shape.openWorldHint, 'Server hint: the tool reaches outside systems.'],
  [
    McpOverride.shape.risk,
    'Your vetted risk of this MCP tool (default "external"); narrowing it lets the mode decide.',
  ],
  [
    McpOverride.shape.approvalDefault,
    'The approval it asks for by default: "allow", "ask" or "deny"; can only make the mode stricter.',
  ],
  [
    McpOverride.shape.targetArgument,
    'The argument naming what the tool acts on (a URL or host), matched by rules\' "target".',
  ],
  [McpOverride.shape.pathArguments, 'Arguments holding file paths, confined to the workspace roots.'],
  [McpOverride.shape.idempotent, 'Re-running the tool after an interruption has no additional effect.'],
  [
    ToolSecurityMetadata.shape.pathArguments,
    'Arguments holding file paths, canonicalized and checked against the roots.',
  ],
  [
    ToolSecurityMetadata.shape.pathScope,
    '"roots" (default: paths confined to the workspace roots) or "sensitive-only" (checked against sensitive host paths only).',
  ],
  [
    ToolSecurityMetadata.shape.targetArgument,
    'The argument naming what the tool acts on (a URL or host), matched by rules\' "target".',
  ],
  [ToolSecurityMetadata.shape.parallelSafe, 'Calls may run at the same time as other calls.'],
  [
    ToolSecurityMetadata.shape.idempotent,
    'Re-running the tool after an interruption has no additional effect.',
  ],
  [
    ToolSecurityMetadata.shape.alwaysAsk,
    'Every call needs a human; approvals never lift it (cannot be combined with approvalDefault "allow").',
  ],
]);

const source = z.enum(['extension', 'skill']).describe('Where the tool comes from: "extension" or "skill".');

/** Documentation of a `tools.<name>` entry declared with nothing but its source (unannotated). */
const UnannotatedTool = z
  .strictObject({ source })
  .describe('An unannotated tool: allowed in config, but every call needs approval.');

/** Documentation of a `tools.<name>` entry with full security metadata (an extension or skill tool). */
const AnnotatedTool = z
  .strictObject({
    ...ToolSecurityMetadata.shape,
    // Shared schemas (ToolRisk, ApprovalDefault): described on a copy, so rules keep their own text.
    risk: ToolSecurityMetadata.shape.risk.describe(
      'How much the tool can change: "read", "write-local", "exec" or "external".',
    ),
    approvalDefault: ToolSecurityMetadata.shape.approvalDefault.describe(
      'The approval it asks for by default: "allow", "ask" or "deny"; can only make the mode stricter.',
    ),
    source,
  })
  .describe(
    'An extension or skill tool with its security metadata; metadata that does not validate makes every call need approval.',
  );

/** The JSON Schema documentation of `tools` entries: MCP overrides by name pattern, else tool metadata. */
export const TOOL_ENTRY_DOCS = {
  mcpPattern: '^mcp:[^:]+:.+$',
  mcp: McpOverride.describe('A local override of one MCP tool, named "mcp:<server>:<tool>".'),
  tool: z
    .union([UnannotatedTool, AnnotatedTool])
    .describe('Security metadata of one extension or skill tool.'),
} as const;
