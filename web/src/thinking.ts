// "Thinking… 12 s": shown while a run waits for its model, with the time since it began waiting.
import { h } from './dom.ts';
import { duration } from './when.ts';

/** An indicator to place in a run's block; `start()` when the model is asked, `stop()` when it answers. */
export function thinkingIndicator(): { el: HTMLElement; start(): void; stop(): void } {
  const elapsed = h('span', { class: 'elapsed', 'data-testid': 'thinking-elapsed' }, '0 s');
  const el = h(
    'div',
    { class: 'thinking', role: 'status', 'data-testid': 'thinking', hidden: true },
    h('span', { class: 'dots', 'aria-hidden': 'true' }),
    'Thinking… ',
    elapsed,
  );
  let since = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  const tick = () => (elapsed.textContent = duration(Date.now() - since));
  return {
    el,
    start() {
      if (timer !== null) return;
      since = Date.now();
      tick();
      el.hidden = false;
      timer = setInterval(tick, 1000);
    },
    stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      el.hidden = true;
    },
  };
}
