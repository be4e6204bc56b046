// A tiny element builder: text is always set as text (never parsed as HTML).

export type Child = Node | string | number | null | undefined | false | readonly Child[];

export interface Props {
  readonly class?: string;
  readonly [attr: string]: string | number | boolean | ((e: Event) => void) | undefined;
}

/** `h('button', { class: 'primary', onclick }, 'Approve')`. `on*` props are listeners; `true` sets an empty attribute. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else
      el.appendChild(
        typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : (c as Node),
      );
  }
}

/**
 * Makes `container`'s children the elements of `items` in order, reusing the element made for
 * each key (so a card being typed into keeps its input and focus) and calling `update` on it.
 */
export function syncList<T>(
  container: HTMLElement,
  items: readonly T[],
  key: (item: T) => string,
  create: (item: T) => HTMLElement,
  update: (el: HTMLElement, item: T) => void = () => {},
): void {
  const existing = new Map<string, HTMLElement>();
  for (const child of Array.from(container.children)) {
    const k = (child as HTMLElement).dataset.key;
    if (k !== undefined) existing.set(k, child as HTMLElement);
    else child.remove();
  }
  const wanted = new Set(items.map(key));
  for (const [k, el] of existing) if (!wanted.has(k)) el.remove();
  let at: Element | null = container.firstElementChild;
  for (const item of items) {
    const k = key(item);
    let el = existing.get(k);
    if (el === undefined) {
      el = create(item);
      el.dataset.key = k;
    } else update(el, item);
    if (el !== at) container.insertBefore(el, at);
    else at = at.nextElementSibling;
  }
}

export function time(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour12: false });
}

export function pretty(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}
