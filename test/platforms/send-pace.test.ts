/** The bot's send pace on a simulated clock: time is advanced, never waited for. */
import { setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import { SendPace, TELEGRAM_PACE } from '../../surfaces/platforms/send-pace.ts';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

/** Advances `clock` by `ms` in 1 ms steps, letting woken turns run. */
async function run(clock: SimulatedClock, ms: number): Promise<void> {
  await flush();
  for (let t = 0; t < ms; t++) {
    clock.advance(1);
    await flush();
  }
}

function turns(pace: SendPace, clock: SimulatedClock, chats: number[]): number[] {
  const at: number[] = [];
  const signal = new AbortController().signal;
  setMaxListeners(0, signal);
  for (const [i, chat] of chats.entries())
    void pace.turn(chat, signal).then((ok) => {
      if (ok) at[i] = clock.now();
    });
  return at;
}

describe('SendPace', () => {
  it('one pace per bot: 84 messages to 84 chats go 1/28 s apart, in order, in 3 s', async () => {
    const clock = new SimulatedClock(1_000_000);
    const pace = new SendPace(clock, TELEGRAM_PACE);
    const at = turns(
      pace,
      clock,
      Array.from({ length: 84 }, (_, i) => i),
    );
    await run(clock, 3100);
    expect(at).toHaveLength(84);
    for (let i = 1; i < at.length; i++)
      expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(35);
    expect((at[83] as number) - 1_000_000).toBeLessThanOrEqual(3000);
  });

  it('timers that fire late do not bunch: never more than 28 turns in any second', async () => {
    const clock = new SimulatedClock(0);
    const pace = new SendPace(clock, TELEGRAM_PACE);
    const at = turns(
      pace,
      clock,
      Array.from({ length: 120 }, (_, i) => i),
    );
    await flush();
    // The event loop stalls for 900 ms: every timer due meanwhile fires at once.
    clock.advance(900);
    await flush();
    await run(clock, 5000);
    expect(at).toHaveLength(120);
    const sorted = [...at].sort((a, b) => a - b);
    for (let i = 28; i < sorted.length; i++)
      expect((sorted[i] as number) - (sorted[i - 28] as number)).toBeGreaterThanOrEqual(1000);
  });

  it('a chat gets at most one message a second, while other chats go on at the bot pace', async () => {
    const clock = new SimulatedClock(0);
    const pace = new SendPace(clock, TELEGRAM_PACE);
    const at = turns(pace, clock, [7, 7, 7, 1, 2, 3]);
    await run(clock, 2100);
    expect(at.slice(0, 3)).toEqual([0, 1000, 2000]);
    // The others are not held behind chat 7's spacing.
    expect(at.slice(3).every((t) => t < 200)).toBe(true);
  });

  it('retry_after holds the whole bot; afterwards the waiting messages go one slot apart, not all at once', async () => {
    const clock = new SimulatedClock(0);
    const pace = new SendPace(clock, TELEGRAM_PACE);
    await pace.turn(1, new AbortController().signal);
    pace.hold(1000);
    const at = turns(
      pace,
      clock,
      Array.from({ length: 20 }, (_, i) => 100 + i),
    );
    await run(clock, 2000);
    expect(at).toHaveLength(20);
    expect(Math.min(...at)).toBeGreaterThanOrEqual(1000);
    expect(new Set(at).size).toBe(20);
    for (let i = 1; i < at.length; i++)
      expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(35);
  });

  it('a turn given up (stop) takes nothing', async () => {
    const clock = new SimulatedClock(0);
    const pace = new SendPace(clock, TELEGRAM_PACE);
    const stop = new AbortController();
    pace.hold(10_000);
    const turn = pace.turn(1, stop.signal);
    stop.abort();
    await expect(turn).resolves.toBe(false);
  });

  it('backoff doubles to its cap, each delay drawn from its upper half (retries spread out)', () => {
    const clock = new SimulatedClock(0);
    const draws = [0, 1, 0.5];
    let i = 0;
    const pace = new SendPace(clock, TELEGRAM_PACE, () => draws[i++ % draws.length] as number);
    expect(pace.backoff(1)).toBe(500);
    expect(pace.backoff(2)).toBe(2000);
    expect(pace.backoff(3)).toBe(3000);
    expect(pace.backoff(20)).toBe(30_000);
    const spread = new SendPace(clock, TELEGRAM_PACE);
    const delays = Array.from({ length: 200 }, () => spread.backoff(3));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(4000);
    expect(new Set(delays).size).toBeGreaterThan(150);
  });
});
