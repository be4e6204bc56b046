import { expect } from 'vitest';
import { FakeTelegram } from '../../platforms/fake-telegram.ts';
import { botToken, cli } from '../../platforms/support.ts';
import { eventually } from '../../support/runtime.ts';
import { writeScenarioConfig } from '../config.ts';
import { CONTRACT_SECRET } from '../fixture.ts';
import { approvalsOf, findRun } from '../state.ts';
import { startRuntimeProcess } from './start-process.ts';
import type { SurfaceDriver } from './types.ts';

/** What the gateway sends a chat once per approval its run parks on (not an answer). */
const PARKED_NOTICE = 'This request needs an approval on the host; it waits in the Inbox.';

/** One case agent's Telegram connection: its own bot (a fake Bot API server) and the one chat allowed to pair. */
interface Bot {
  readonly agentId: string;
  readonly platformId: string;
  readonly chatId: number;
  readonly fake: FakeTelegram;
  /** How many messages the chat had got when pairing was done (instructions only). */
  pairedAt: number;
  /** How many `getUpdates` the bot had got when the runtime was last (re)started. */
  polls: number;
  /** The run of the one message the matrix sends from this chat. */
  runId: string | null;
}

/** `tg-c10` → `SNOTRA_SECRET_TG_C10` (the `env` secrets backend's naming). */
const secretEnv = (name: string) => `SNOTRA_SECRET_${name.toUpperCase().replace(/-/g, '_')}`;

/**
 * Platform: `snotra start` with one Telegram connection per case agent
 * (`surfaces.platforms[]`, `apiBase` a fake Bot API server on 127.0.0.1 speaking the real
 * protocol, the bot token an `env` secret, any private chat may ask to pair). Before the first
 * case the chat is paired the real way: it writes to the bot, gets instructions with a code, and
 * the local user runs `snotra platforms pair ID CODE`. A trigger is a message from that chat; the
 * gateway's long poll receives it and starts the unattended run (surface `platform`, run id
 * `<agent>:platform:<connection>:<chat>:<message>`). When the run completes, the chat must have
 * received its answer exactly once (besides the one notice per parked approval), and no message
 * to it may hold a configured secret.
 */
export const platformDriver: SurfaceDriver = {
  surface: 'platform',
  interaction: 'unattended',
  entry:
    '`snotra start` with one `surfaces.platforms[]` Telegram bot per case (fake Bot API on 127.0.0.1), its chat paired by `snotra platforms pair`; a message from the chat starts the run',
  async start(scenario, folder) {
    const bots: Bot[] = await Promise.all(
      scenario.agents
        .filter((a) => a.text !== null)
        .map(async (a, i) => ({
          agentId: a.id,
          platformId: `tg-${a.id}`,
          chatId: 7_100_000 + i,
          fake: await FakeTelegram.start(botToken()),
          pairedAt: 0,
          polls: 0,
          runId: null,
        })),
    );
    const tokens = bots.map((b) => b.fake.token);
    const closeFakes = async () => {
      for (const b of bots.splice(0)) await b.fake.close();
    };
    try {
      const platforms = bots.map((b) => ({
        id: b.platformId,
        kind: 'telegram',
        agent: b.agentId,
        token: { secret: b.platformId },
        apiBase: b.fake.url,
      }));
      const config = writeScenarioConfig(folder, scenario, { surfaces: { platforms } });
      const env = {
        ...scenario.env,
        ...Object.fromEntries(bots.map((b) => [secretEnv(b.platformId), b.fake.token])),
      };
      const byAgent = new Map(bots.map((b) => [b.agentId, b]));
      const byRun = new Map<string, Bot>();
      const texts = new Map(scenario.agents.map((a) => [a.id, a.text]));
      const rt = await startRuntimeProcess(config, env, () => async (agentId) => {
        const bot = byAgent.get(agentId);
        const text = texts.get(agentId);
        if (bot === undefined || text === null || text === undefined)
          throw new Error(`platform: agent ${agentId} has no chat`);
        if (bot.runId !== null) throw new Error(`platform: chat of ${agentId} already carried ${bot.runId}`);
        const { messageId } = bot.fake.push(bot.chatId, text);
        const runId = `${agentId}:platform:${bot.platformId}:${bot.chatId}:${messageId}`;
        const run = await findRun(folder.stateDir, (r) => r.runId === runId, `the platform run ${runId}`);
        expect(run).toMatchObject({ agentId, surface: 'platform', parentRunId: null });
        bot.runId = runId;
        byRun.set(runId, bot);
        return runId;
      });
      const restart = rt.restart;
      rt.restart = async () => {
        for (const b of bots) b.polls = b.fake.offsets.length;
        await restart();
      };
      const close = rt.close;
      rt.close = async () => {
        await close();
        await closeFakes();
      };
      // Pair every chat the way its owner would (a few at a time: each pairing is a CLI process).
      const pair = async (b: Bot) => {
        b.fake.push(b.chatId, 'hello bot');
        const text = await eventually(
          () => b.fake.to(b.chatId)[0]?.text,
          30_000,
          `instructions to ${b.chatId}`,
        );
        const code = new RegExp(`snotra platforms pair ${b.platformId} ([0-9A-Z]{4}-[0-9A-Z]{4})`).exec(
          text,
        )?.[1];
        if (code === undefined) throw new Error(`platform: no pairing code in ${JSON.stringify(text)}`);
        const r = await cli([
          'platforms',
          'pair',
          b.platformId,
          code,
          '--state-dir',
          folder.stateDir,
          '--json',
        ]);
        if (r.code !== 0) throw new Error(`platform: pairing ${b.platformId} failed: ${r.stdout}${r.stderr}`);
        b.pairedAt = b.fake.to(b.chatId).length;
      };
      const queue = [...bots];
      try {
        await Promise.all(
          [0, 1, 2].map(async () => {
            for (let b = queue.shift(); b !== undefined; b = queue.shift()) await pair(b);
          }),
        );
      } catch (err) {
        await rt.close();
        throw err;
      }
      const secrets = [CONTRACT_SECRET, ...tokens];
      rt.settled = async (runId, outcome) => {
        const bot = byRun.get(runId);
        if (bot === undefined) return; // a child of the message's run: its answer is the parent's
        // The runtime now running has polled the bot (a restarted gateway re-handles open messages first).
        await eventually(() => bot.fake.offsets.length > bot.polls, 30_000, `a poll of ${bot.platformId}`);
        const answer = outcome.text ?? '';
        expect(answer, 'a completed platform run has an answer to send').not.toBe('');
        const answers = () =>
          bot.fake
            .to(bot.chatId)
            .slice(bot.pairedAt)
            .filter((m) => !m.text.startsWith(PARKED_NOTICE));
        await eventually(
          () => answers().some((m) => m.text === answer),
          30_000,
          `the answer of ${runId} in chat ${bot.chatId}`,
        );
        expect(answers().map((m) => m.text)).toEqual([answer]);
        // One notice per approval the run parked on (a restart does not repeat one).
        const approvals = approvalsOf(folder.stateDir, runId).length;
        const notices = () => bot.fake.to(bot.chatId).filter((m) => m.text.startsWith(PARKED_NOTICE)).length;
        await eventually(() => notices() >= approvals, 30_000, `${approvals} parked notices`).catch(
          (err: Error) => {
            // What the chat got and what the run asked, for the failure message.
            const got = bot.fake.to(bot.chatId).map((m) => m.text.slice(0, 50));
            const asked = approvalsOf(folder.stateDir, runId).map((a) => `${a.id}:${a.tool}:${a.status}`);
            throw new Error(
              `${err.message} to ${bot.chatId}: chat got ${JSON.stringify(got)}; approvals ${JSON.stringify(asked)}; ` +
                `${bot.fake.sendRequests} sendMessage requests`,
            );
          },
        );
        expect(notices()).toBe(approvals);
        for (const m of bot.fake.to(bot.chatId))
          for (const s of secrets)
            expect(m.text.includes(s), `a secret in a message to the chat`).toBe(false);
      };
      rt.secrets = () => tokens;
      rt.fromStranger = async (agentId, text) => {
        const bot = byAgent.get(agentId);
        if (bot === undefined) throw new Error(`platform: agent ${agentId} has no bot`);
        const stranger = bot.chatId + 500_000;
        bot.fake.push(stranger, text, { name: 'Mallory' });
        await eventually(() => bot.fake.to(stranger).length > 0, 30_000, `an answer to chat ${stranger}`);
        return bot.fake.to(stranger).map((m) => m.text);
      };
      return rt;
    } catch (err) {
      await closeFakes();
      throw err;
    }
  },
};
