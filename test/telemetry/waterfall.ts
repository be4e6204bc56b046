import type { ExportedSpan } from './otlp-receiver.ts';

const ROW = 22;
const LABEL = 330;
const WIDTH = 980;

const escape = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The colour of a span by its operation. */
function colour(name: string): string {
  if (name.startsWith('invoke_agent')) return '#4e79a7';
  if (name.startsWith('chat')) return '#59a14f';
  if (name.startsWith('execute_tool')) return '#f28e2b';
  return '#e15759';
}

/**
 * One trace as an SVG waterfall (what Jaeger's timeline shows): a row per span, children under
 * their parent, bars on a common time axis. The gap of a restart shows as the gap it was.
 */
export function renderWaterfall(spans: readonly ExportedSpan[]): string {
  const byParent = new Map<string, ExportedSpan[]>();
  for (const s of spans) byParent.set(s.parentSpanId, [...(byParent.get(s.parentSpanId) ?? []), s]);
  const ids = new Set(spans.map((s) => s.spanId));
  const rows: { span: ExportedSpan; depth: number }[] = [];
  const walk = (parent: string, depth: number): void => {
    for (const s of (byParent.get(parent) ?? []).sort((a, b) => a.start - b.start)) {
      rows.push({ span: s, depth });
      walk(s.spanId, depth + 1);
    }
  };
  for (const root of spans.filter((s) => !ids.has(s.parentSpanId))) {
    rows.push({ span: root, depth: 0 });
    walk(root.spanId, 1);
  }
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(...spans.map((s) => s.end), t0 + 1);
  const x = (t: number): number => LABEL + ((t - t0) / (t1 - t0)) * (WIDTH - LABEL - 10);
  const height = rows.length * ROW + 40;
  const lines = rows.map(({ span, depth }, i) => {
    const y = 30 + i * ROW;
    const w = Math.max(2, x(span.end) - x(span.start));
    return [
      `<text x="${8 + depth * 14}" y="${y + 14}">${escape(span.name)}</text>`,
      `<rect x="${x(span.start).toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${ROW - 8}" rx="2" fill="${colour(span.name)}"/>`,
    ].join('');
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="18" font-weight="bold">trace ${escape(spans[0]?.traceId ?? '')} — ${rows.length} spans, ${((t1 - t0) / 1000).toFixed(2)} s</text>`,
    ...lines,
    '</svg>',
  ].join('\n');
}
