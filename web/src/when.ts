// Times as a person reads them: a date with the time, how long is left, how long it has taken.

const sameDay = (a: Date, b: Date) =>
  a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();

/** `Mon 7 Dec, 20:07:50` (the year too when it is not this year's); `today, 20:07:50` for today. */
export function dateTime(ms: number, now: number = Date.now()): string {
  const d = new Date(ms);
  const n = new Date(now);
  const clock = d.toLocaleTimeString('en-GB', { hour12: false });
  if (sameDay(d, n)) return `today, ${clock}`;
  const day = d.toLocaleDateString('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    ...(d.getFullYear() === n.getFullYear() ? {} : { year: 'numeric' }),
  });
  return `${day.replace(',', '')}, ${clock}`;
}

/** A span of time in its two largest units: `2 d 3 h`, `23 h 12 min`, `4 min 05 s`, `12 s`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min ${String(sec).padStart(2, '0')} s`;
  return `${sec} s`;
}

/** `expires Mon 7 Dec, 20:07:50 (in 23 h 12 min)`, or `expired … (5 min 00 s ago)`. */
export function expiryText(expiresAt: number, now: number = Date.now()): string {
  return expiresAt > now
    ? `${dateTime(expiresAt, now)} (in ${duration(expiresAt - now)})`
    : `${dateTime(expiresAt, now)} (expired ${duration(now - expiresAt)} ago)`;
}
