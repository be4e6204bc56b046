import type { CommandSpec } from './command-spec.ts';
import { JSON_OUT, STATE } from './command-spec.ts';
import { INIT_SPEC } from './init/spec.ts';
import { POLICY_SPECS } from './policy-commands.ts';

export type { CommandRun, CommandSpec } from './command-spec.ts';

/** The groups (`snotra policy …`), in help order, with what each is for. */
export const GROUPS: Readonly<Record<string, string>> = {
  policy: 'evaluate calls and show the effective policy',
  inbox: 'the approvals waiting for a human, and deciding them',
  runs: 'persisted runs and their outcome',
  sessions: 'durable conversations: their transcript, and removing one',
  grants: 'session and standing approvals humans gave',
  goal: 'goal loops: their state, and starting, pausing, resuming or cancelling one',
  platforms: 'messaging platform chats: pairing and what was not delivered',
  'mcp-servers': 'the configured MCP servers: status, tools and their effective metadata',
};

/** Every command and subcommand of `snotra`. */
export const COMMAND_SPECS: readonly CommandSpec[] = [
  {
    path: ['start'],
    summary: 'run the runtime until SIGINT/SIGTERM',
    usage: '[--config F] [--log-level L]',
    options: [
      ['--config F', 'the config file (else ./snotra.config.json, else the embedded defaults)'],
      ['--log-level L', 'trace|debug|info|warn|error|fatal|silent (or SNOTRA_LOG_LEVEL; default info)'],
    ],
    examples: ['snotra start', 'snotra start --config ./snotra.config.json --log-level debug'],
    run: async (argv, io, cwd) => (await import('./start.ts')).startCommand(argv, io, cwd),
  },
  {
    path: ['dev-cluster'],
    summary: 'a local three-server NATS JetStream cluster for trying cluster mode (docs/cluster.md)',
    usage: '[--dir D] [--nodes N]',
    options: [
      [
        '--dir D',
        'where server data, the 0600 token file and node configs go (default ./.snotra-dev-cluster)',
      ],
      ['--nodes N', 'how many runtime node configs to write, 1 to 9 (default 2)'],
    ],
    examples: ['snotra dev-cluster', 'snotra dev-cluster --dir /tmp/cluster --nodes 3'],
    run: async (argv, io, cwd) => (await import('./dev-cluster.ts')).devClusterCommand(argv, io, cwd),
  },
  {
    path: ['app'],
    summary:
      'the desktop app: the runtime plus its web app in a Chromium window, stopped when the window closes',
    usage: '[--config F] [--headless]',
    options: [
      ['--config F', 'the config file (else ./snotra.config.json, else the embedded defaults)'],
      ['--headless', 'no visible window (Chromium headless; for tests and screenshots)'],
    ],
    examples: [
      'snotra app',
      'snotra app --config ./snotra.config.json',
      'CHROME_PATH=/usr/bin/google-chrome snotra app',
    ],
    run: async (argv, io, cwd) => (await import('./app.ts')).appCommand(argv, io, cwd),
  },
  {
    path: ['open'],
    summary:
      'open the web app of the running runtime in your browser (a single-use login code, never the token)',
    usage: '[--config F | --state-dir D] [--print]',
    options: [
      ...STATE,
      ['--print', 'print the login URL instead of opening a browser (it works once, within 60 s)'],
    ],
    examples: ['snotra open', 'snotra open --print --config ./snotra.config.json'],
    run: async (argv, io, cwd) => (await import('./open.ts')).openCommand(argv, io, cwd),
  },
  {
    path: ['mcp'],
    summary: 'the runtime as an MCP server on stdio (tools run_task, get_run, list_inbox; no approvals)',
    usage: '[--config F] [--state-dir D] [--wait-ms N] [--log-level L]',
    options: [
      ['--config F', 'the config file (else ./snotra.config.json, else the embedded defaults)'],
      ['--state-dir D', 'the state dir of its runtime (else the config’s); one runtime per state dir'],
      ['--wait-ms N', 'longest wait of run_task for the answer, 0 to 600000 (default 25000)'],
      [
        '--log-level L',
        'trace|debug|info|warn|error|fatal|silent (logs go to stderr; stdout is the protocol)',
      ],
    ],
    examples: [
      'snotra mcp --config ~/snotra/snotra.config.json',
      'snotra mcp --state-dir ~/.snotra-mcp --wait-ms 50000',
    ],
    run: async (argv, io, cwd) => (await import('./mcp.ts')).mcpCommand(argv, io, cwd),
  },
  {
    path: ['chat'],
    summary: 'the interactive chat on a session (also `snotra` alone on a terminal)',
    usage: '[--config F] [--agent A] [--session S | --continue] [--no-color]',
    options: [
      ['--config F', 'the config file'],
      ['--agent A', 'the agent (else the config’s only agent)'],
      ['--session S', 'the conversation S (new or not)'],
      ['--continue', 'this workspace’s latest conversation'],
      ['--no-color', 'no colours (NO_COLOR=1 too)'],
    ],
    examples: ['snotra chat --session notes', 'snotra', 'echo "what changed?" | snotra chat --continue'],
    run: async (argv, io, cwd) => (await import('./chat/command.ts')).chatCommand(argv, io, cwd),
  },
  {
    path: ['run'],
    summary: 'one headless run of an agent (exit 0 completed, 1 failed/denied, 20 parked)',
    usage:
      '[--config F] [--agent A] [--json] [--unattended] [--session S | --continue] (MESSAGE|-) | --resume RUN',
    options: [
      ['--config F', 'the config file'],
      ['--agent A', 'the agent (else the config’s only agent)'],
      ['--json', 'one JSON line per run event'],
      ['--unattended', 'never ask: park on an approval and exit 20'],
      ['--session S', 'continue (or begin) the conversation S; also the run’s task id'],
      ['--continue', 'continue this workspace’s most recent conversation'],
      ['--resume RUN', 'finish a parked run whose approval was decided'],
    ],
    examples: [
      'snotra run "summarize README.md"',
      'echo "list the open TODOs" | snotra run --json -',
      'snotra run --unattended --session nightly "tidy the changelog"',
      'snotra run --continue "and now the tests"',
      'snotra run --resume assistant:run-123',
    ],
    run: async (argv, io, cwd) => (await import('./run.ts')).runCommand(argv, io, cwd),
  },
  {
    path: ['demo'],
    summary: 'the self-contained walkthrough on a temp workspace',
    usage: '[--keep]',
    options: [['--keep', 'keep the temp workspace afterwards']],
    examples: ['snotra demo', 'snotra demo --keep'],
    run: async (argv, io) => (await import('./demo.ts')).demoCommand(argv, io),
  },
  ...POLICY_SPECS,
  {
    path: ['inbox', 'list'],
    summary: 'pending approvals',
    usage: '[--session S] [--task T] [--agent A] [--json] [--state-dir D] [--config F]',
    options: [
      ['--session S', 'only this session'],
      ['--task T', 'only this task'],
      ['--agent A', 'only this agent'],
      JSON_OUT,
      ...STATE,
    ],
    examples: ['snotra inbox list', 'snotra inbox list --agent assistant --json'],
    run: async (argv, io, cwd) => (await import('./inbox.ts')).inboxCommand(['list', ...argv], io, cwd),
  },
  {
    path: ['inbox', 'show'],
    summary: 'one approval with its arguments, rule and decision',
    usage: 'ID [--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra inbox show apr-123', 'snotra inbox show apr-123 --json'],
    run: async (argv, io, cwd) => (await import('./inbox.ts')).inboxCommand(['show', ...argv], io, cwd),
  },
  {
    path: ['inbox', 'approve'],
    summary: 'approve a pending request (single use)',
    usage: 'ID [--reason TEXT] [--json] [--state-dir D] [--config F]',
    options: [['--reason TEXT', 'why (1 to 1000 characters)'], JSON_OUT, ...STATE],
    examples: ['snotra inbox approve apr-123', 'snotra inbox approve apr-123 --reason "checked the diff"'],
    run: async (argv, io, cwd) => (await import('./inbox.ts')).inboxCommand(['approve', ...argv], io, cwd),
  },
  {
    path: ['inbox', 'deny'],
    summary: 'deny a pending request; the reason is shown to the model',
    usage: 'ID [--reason TEXT] [--json] [--state-dir D] [--config F]',
    options: [['--reason TEXT', 'why, for the model (1 to 1000 characters)'], JSON_OUT, ...STATE],
    examples: ['snotra inbox deny apr-123', 'snotra inbox deny apr-123 --reason "use a branch instead"'],
    run: async (argv, io, cwd) => (await import('./inbox.ts')).inboxCommand(['deny', ...argv], io, cwd),
  },
  {
    path: ['runs', 'list'],
    summary: 'persisted runs and their state',
    usage: '[--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra runs list', 'snotra runs list --json --state-dir ./.snotra'],
    run: async (argv, io, cwd) => (await import('./runs.ts')).runsCommand(['list', ...argv], io, cwd),
  },
  {
    path: ['runs', 'show'],
    summary: 'one run and its outcome',
    usage: 'RUN [--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra runs show assistant:run-123', 'snotra runs show assistant:run-123 --json'],
    run: async (argv, io, cwd) => (await import('./runs.ts')).runsCommand(['show', ...argv], io, cwd),
  },
  {
    path: ['sessions', 'list'],
    summary: 'durable conversations, most recently used first',
    usage: '[--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra sessions list', 'snotra sessions list --json'],
    run: async (argv, io, cwd) => (await import('./sessions.ts')).sessionsCommand(['list', ...argv], io, cwd),
  },
  {
    path: ['sessions', 'show'],
    summary: 'one conversation and its transcript (redacted)',
    usage: 'SESSION [--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra sessions show notes', 'snotra sessions show notes --json'],
    run: async (argv, io, cwd) => (await import('./sessions.ts')).sessionsCommand(['show', ...argv], io, cwd),
  },
  {
    path: ['sessions', 'rm'],
    summary: 'remove a conversation and its transcript (refused while a run holds it)',
    usage: 'SESSION [--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra sessions rm notes'],
    run: async (argv, io, cwd) => (await import('./sessions.ts')).sessionsCommand(['rm', ...argv], io, cwd),
  },
  {
    path: ['goal', 'list'],
    summary: 'every configured goal and its status, iteration and usage',
    usage: '[--json]',
    options: [...STATE, JSON_OUT],
    examples: ['snotra goal list', 'snotra goal list --json'],
    run: async (argv, io, cwd) => (await import('./goal.ts')).goalCommand(['list', ...argv], io, cwd),
  },
  {
    path: ['goal', 'show'],
    summary: 'one goal: status, usage, the evidence of a claimed completion, its iterations',
    usage: 'ID [--json]',
    options: [...STATE, JSON_OUT],
    examples: ['snotra goal show fix-tests', 'snotra goal show fix-tests --json'],
    run: async (argv, io, cwd) => (await import('./goal.ts')).goalCommand(['show', ...argv], io, cwd),
  },
  {
    path: ['goal', 'start'],
    summary: 'start a goal (again, as a new epoch, when it has finished)',
    usage: 'ID [--json]',
    options: [...STATE, JSON_OUT],
    examples: ['snotra goal start fix-tests'],
    run: async (argv, io, cwd) => (await import('./goal.ts')).goalCommand(['start', ...argv], io, cwd),
  },
  {
    path: ['goal', 'pause'],
    summary: 'pause a goal: the iteration in flight finishes, no new one starts',
    usage: 'ID [--json]',
    options: [...STATE, JSON_OUT],
    examples: ['snotra goal pause fix-tests'],
    run: async (argv, io, cwd) => (await import('./goal.ts')).goalCommand(['pause', ...argv], io, cwd),
  },
  {
    path: ['goal', 'resume'],
    summary: 'resume a paused goal',
    usage: 'ID [--json]',
    options: [...STATE, JSON_OUT],
    examples: ['snotra goal resume fix-tests'],
    run: async (argv, io, cwd) => (await import('./goal.ts')).goalCommand(['resume', ...argv], io, cwd),
  },
  {
    path: ['goal', 'cancel'],
    summary: 'cancel a goal and the run of its current iteration',
    usage: 'ID [--json]',
    options: [...STATE, JSON_OUT],
    examples: ['snotra goal cancel fix-tests'],
    run: async (argv, io, cwd) => (await import('./goal.ts')).goalCommand(['cancel', ...argv], io, cwd),
  },
  {
    path: ['tasks'],
    summary: 'the scheduler’s journal, newest first',
    usage: '[--task T] [--limit N] [--json] [--state-dir D] [--config F]',
    options: [
      ['--task T', 'only this task'],
      ['--limit N', 'at most N firings (default 100)'],
      JSON_OUT,
      ...STATE,
    ],
    examples: ['snotra tasks', 'snotra tasks --task nightly --limit 10 --json'],
    run: async (argv, io, cwd) => (await import('./tasks.ts')).tasksCommand(argv, io, cwd),
  },
  {
    path: ['grants', 'list'],
    summary: 'active session and standing grants',
    usage: '[--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra grants list', 'snotra grants list --json'],
    run: async (argv, io, cwd) => (await import('./grants.ts')).grantsCommand(['list', ...argv], io, cwd),
  },
  {
    path: ['grants', 'revoke'],
    summary: 'take a grant back (audited)',
    usage: 'ID [--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra grants revoke grant-123'],
    run: async (argv, io, cwd) => (await import('./grants.ts')).grantsCommand(['revoke', ...argv], io, cwd),
  },
  {
    path: ['platforms', 'list'],
    summary:
      'paired chats, open pairing codes and every undelivered reply part (failed, unknown or still to send)',
    usage: '[--limit N] [--after CURSOR] [--json] [--state-dir D] [--config F]',
    options: [
      [
        '--limit N',
        'show at most N undelivered parts (1 to 1000), newest first; without it, all of them. A last line (JSON: "next") gives the cursor of the next page',
      ],
      ['--after CURSOR', 'the page after CURSOR (the "next" of the page before)'],
      JSON_OUT,
      ...STATE,
    ],
    examples: [
      'snotra platforms list',
      'snotra platforms list --json',
      'snotra platforms list --limit 50 --json',
    ],
    run: async (argv, io, cwd) =>
      (await import('./platforms.ts')).platformsCommand(['list', ...argv], io, cwd),
  },
  {
    path: ['platforms', 'pair'],
    summary: 'pair the chat a bot gave CODE to (the code works once, for ten minutes)',
    usage: 'ID CODE [--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra platforms pair telegram 7KQ2-M9XD'],
    run: async (argv, io, cwd) =>
      (await import('./platforms.ts')).platformsCommand(['pair', ...argv], io, cwd),
  },
  {
    path: ['platforms', 'unpair'],
    summary: 'stop answering a chat (audited)',
    usage: 'ID CHAT [--json] [--state-dir D] [--config F]',
    options: [JSON_OUT, ...STATE],
    examples: ['snotra platforms unpair telegram 123456789'],
    run: async (argv, io, cwd) =>
      (await import('./platforms.ts')).platformsCommand(['unpair', ...argv], io, cwd),
  },
  {
    path: ['mcp-servers', 'list'],
    summary:
      'start each configured MCP server, show its status (state, protocol, tools, last error), stop it',
    usage: '[--config F] [--json]',
    options: [['--config F', 'the config file (else ./snotra.config.json)'], JSON_OUT],
    examples: ['snotra mcp-servers list', 'snotra mcp-servers list --json'],
    run: async (argv, io, cwd) =>
      (await import('./mcp-servers.ts')).mcpServersCommand(['list', ...argv], io, cwd),
  },
  {
    path: ['mcp-servers', 'tools'],
    summary:
      'the tools of one MCP server with their effective metadata and why (exit 1 when it does not start)',
    usage: 'ID [--config F] [--json]',
    options: [['--config F', 'the config file (else ./snotra.config.json)'], JSON_OUT],
    examples: ['snotra mcp-servers tools github', 'snotra mcp-servers tools fs --json'],
    run: async (argv, io, cwd) =>
      (await import('./mcp-servers.ts')).mcpServersCommand(['tools', ...argv], io, cwd),
  },
  {
    path: ['rewind'],
    summary:
      'checkpoints taken before calls that could change a root (--list), and putting the roots back to one (diff first; audited; undoable)',
    usage:
      '--list [--run R] [--session S] [--json] | CHECKPOINT [--dry-run] [--json]  [--state-dir D] [--config F]',
    options: [
      ['--list', 'the checkpoints, oldest first: run, call, tool, time, and the paths changed since each'],
      ['--run R', 'with --list: only this run’s checkpoints'],
      ['--session S', 'with --list: only this session’s checkpoints'],
      ['--dry-run', 'show the diff a rewind would make, change nothing'],
      JSON_OUT,
      ...STATE,
    ],
    examples: [
      'snotra rewind --list --run assistant:run-123',
      'snotra rewind ck-0mic2x1p-9f3a2b1c --dry-run',
    ],
    run: async (argv, io, cwd) => (await import('./rewind.ts')).rewindCommand(argv, io, cwd),
  },
  {
    path: ['audit'],
    summary:
      'the audit trail; --verify checks the hash chain; why RUN CALL: one call’s provenance (exit 1: not closed)',
    usage: '[why RUN CALL] [--db FILE | --state-dir D] [--config F] [--run R] [--json] [--verify]',
    options: [
      ['--db FILE', 'the database file (instead of <state-dir>/snotra.db)'],
      ...STATE,
      ['--run R', 'only this run’s events'],
      ['--json', 'one JSON line per event; errors as {"error":{"code","message"}}'],
      ['--verify', 'walk the hash chain and name the first broken event (exit 1)'],
    ],
    examples: [
      'snotra audit --run assistant:run-123',
      'snotra audit --verify --json',
      'snotra audit why assistant:run-123 c1 --json',
    ],
    run: async (argv, io, cwd) => (await import('./audit.ts')).auditCommand(argv, io, cwd),
  },
  {
    path: ['doctor'],
    summary: 'what this machine and config have and lack, each with the fix',
    usage: '[--config F] [--json]',
    options: [['--config F', 'the config file'], JSON_OUT],
    examples: ['snotra doctor', 'snotra doctor --json'],
    run: async (argv, io, cwd) => (await import('./doctor.ts')).doctorCommand(argv, io, cwd),
  },
  INIT_SPEC,
  {
    path: ['inspect'],
    summary: 'the live actor tree of the running runtime, one update per change',
    usage: '[--json] [--state-dir D] [--config F]',
    options: [
      ['--json', 'the tree as one JSON line, then one JSON line per change (actor.created|state|stopped)'],
      ...STATE,
    ],
    examples: ['snotra inspect', 'snotra inspect --json --state-dir ~/.local/state/snotra'],
    run: async (argv, io, cwd) => (await import('./inspect.ts')).inspectCommand(argv, io, cwd),
  },
  {
    path: ['viz'],
    summary: 'a state machine’s states and transitions',
    usage: '[machine] [--format mermaid|dot|svg|json | --json] [--out FILE]',
    options: [
      ['--format F', 'mermaid (default), dot, svg or json'],
      ['--json', 'the same as --format json'],
      ['--out FILE', 'write to FILE instead of stdout'],
    ],
    examples: ['snotra viz', 'snotra viz run --format svg --out run.svg'],
    run: async (argv, io, cwd) => (await import('./viz.ts')).vizCommand(argv, io, cwd),
  },
  {
    path: ['completion'],
    summary: 'the shell completion script of bash, zsh or fish',
    usage: 'bash|zsh|fish',
    options: [],
    examples: [
      'snotra completion bash > ~/.local/share/bash-completion/completions/snotra',
      'snotra completion fish > ~/.config/fish/completions/snotra.fish',
    ],
    run: async (argv, io) =>
      (await import('./completion/command.ts')).completionCommand(argv, io, COMMAND_SPECS, GROUPS),
  },
];

/** The flag names of a spec (`--config`), for suggestions. */
export function flagNames(spec: CommandSpec): string[] {
  return [...spec.options.map(([flags]) => flags.split(' ')[0] as string), '--help'];
}
