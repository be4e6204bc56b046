// Tabs as WAI-ARIA describes them: a tablist of buttons, each controlling its panel; the arrow
// keys, Home and End move between tabs, Enter or Space (a click) opens one.
import { h, type Child } from './dom.ts';

let lists = 0;

export function tabList<T extends string>(
  label: string,
  items: readonly { id: T; label: Child; panel: HTMLElement }[],
  onSelect: (id: T) => void = () => {},
): { el: HTMLElement; select(id: T): void; selected(): T } {
  const prefix = `tabs${++lists}`;
  let current = items[0]!.id;
  const buttons = items.map((item) => {
    item.panel.id ||= `${prefix}-${item.id}-panel`;
    item.panel.setAttribute('role', 'tabpanel');
    item.panel.setAttribute('aria-labelledby', `${prefix}-${item.id}`);
    return h(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `${prefix}-${item.id}`,
        class: 'tab',
        'data-tab': item.id,
        'aria-controls': item.panel.id,
        onclick: () => select(item.id),
      },
      item.label,
    );
  });
  const el = h('div', { role: 'tablist', 'aria-label': label, class: 'tabs' }, buttons);
  el.addEventListener('keydown', (ev) => {
    const at = buttons.findIndex((b) => b === document.activeElement);
    if (at === -1) return;
    const to =
      ev.key === 'ArrowRight'
        ? (at + 1) % buttons.length
        : ev.key === 'ArrowLeft'
          ? (at - 1 + buttons.length) % buttons.length
          : ev.key === 'Home'
            ? 0
            : ev.key === 'End'
              ? buttons.length - 1
              : null;
    if (to === null) return;
    ev.preventDefault();
    buttons[to]!.focus();
  });
  function select(id: T): void {
    current = id;
    items.forEach((item, i) => {
      const on = item.id === id;
      item.panel.hidden = !on;
      const b = buttons[i]!;
      b.classList.toggle('active', on);
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
    });
    onSelect(id);
  }
  return { el, select, selected: () => current };
}
