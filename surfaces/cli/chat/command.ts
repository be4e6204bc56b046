import { parseArgs } from 'node:util';
import { checkSessionName, resolveConfig, systemClock } from '../../../runtime/index.ts';
import { embeddedChat, type ChatRuntime } from '../../client/chat.ts';
import { joinedChat } from '../../client/chat-joined.ts';
import { ClientError } from '../../client/errors.ts';
import { CommandFailure, UsageError, type CliIo } from '../io.ts';
import { paintFor } from '../run/paint.ts';
import { pickAgent } from '../run/pick-agent.ts';
import { CtrlC } from './ctrl-c.ts';
import { chatLoop } from './loop.ts';

const USAGE = 'usage: snotra chat [--config F] [--agent A] [--session S | --continue] [--no-color]';

interface ChatArgs {
  readonly config: string | undefined;
  readonly agent: string | undefined;
  readonly session: string | undefined;
  readonly continue: boolean;
  readonly noColor: boolean;
}

function parse(argv: string[]): ChatArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        agent: { type: 'string' },
        session: { type: 'string' },
        continue: { type: 'boolean', default: false },
        'no-color': { type: 'boolean', default: false },
      },
      allowPositionals: false,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values } = parsed;
  if (values.session !== undefined && values.continue)
    throw new UsageError(`give --session S or --continue, not both\n${USAGE}`);
  if (values.session !== undefined) {
    try {
      checkSessionName(values.session, '--session');
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  return {
    config: values.config,
    agent: values.agent,
    session: values.session,
    continue: values.continue,
    noColor: values['no-color'],
  };
}

/** Whether this process has a terminal to chat on (stdin and stdout both TTYs). */
export function onTerminal(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}

/**
 * `snotra chat` (and `snotra` alone on a terminal): the interactive chat on a session. With
 * stdin not a terminal it reads one message from stdin and runs it as `snotra run -` does (same
 * output and exit codes), so scripts get one answer.
 */
export async function chatCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const args = parse(argv);
  if (!onTerminal()) {
    const { runCommand } = await import('../run.ts');
    const flags = [
      ...(args.config !== undefined ? ['--config', args.config] : []),
      ...(args.agent !== undefined ? ['--agent', args.agent] : []),
      ...(args.session !== undefined ? ['--session', args.session] : []),
      ...(args.continue ? ['--continue'] : []),
    ];
    return runCommand([...flags, '-'], io, cwd);
  }
  const loaded = resolveConfig(args.config, cwd);
  const { rt, agent } = await chatRuntime(loaded, io, args.agent);
  const ctrlC = new CtrlC(() => {});
  try {
    let session: string | null = args.session ?? null;
    if (args.continue) {
      const latest = await rt.latestSession();
      if (latest === null)
        throw new CommandFailure(
          'session_not_found',
          '--continue: no conversation yet in this workspace; start one with `snotra chat`',
        );
      session = latest.sessionId;
    }
    return await chatLoop({
      rt,
      loaded,
      agent,
      session,
      io,
      paint: paintFor(true, args.noColor),
      clock: systemClock,
      ctrlC,
    });
  } finally {
    // An embedded runtime stops (its runs saved) before the chat ends: a Ctrl-C now says so;
    // another one leaves at once. A joined one goes on (its runs too): the chat only leaves it.
    if (rt.kind === 'embedded')
      ctrlC.otherwise(() => {
        io.stderr('snotra chat: stopping the runtime (Ctrl-C again to leave now)\n');
        ctrlC.otherwise(() => process.exit(130));
      });
    await rt.close();
    ctrlC.close();
  }
}

/**
 * The chat's runtime and agent: the runtime running on the config's state dir (`snotra start`),
 * joined over its join socket (the agent one of its agents), or, only when none runs, one started
 * in this process for the chat (it stops when the chat ends; the agent one of the config's).
 */
async function chatRuntime(
  loaded: ReturnType<typeof resolveConfig>,
  io: CliIo,
  wanted: string | undefined,
): Promise<{ rt: ChatRuntime; agent: string }> {
  let joined: ChatRuntime | null;
  try {
    joined = await joinedChat(loaded.config.stateDir);
  } catch (err) {
    throw err instanceof ClientError ? new CommandFailure(err.code, err.message) : err;
  }
  if (joined !== null) {
    try {
      return {
        rt: joined,
        agent: pickAgent(joined.agents, `the running runtime (pid ${joined.pid})`, wanted),
      };
    } catch (err) {
      await joined.close();
      throw err;
    }
  }
  const agent = pickAgent(Object.keys(loaded.config.agents), loaded.file ?? 'the default config', wanted);
  // Loaded only now: a chat that joins never loads the runtime's modules (bus, store, XState).
  const { openRuntime } = await import('../run/open-runtime.ts');
  const rt = await openRuntime({ loaded, io, json: false, who: 'snotra chat', onRunEvent: () => {} });
  return { rt: embeddedChat(rt, Object.keys(loaded.config.agents)), agent };
}
