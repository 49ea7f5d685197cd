import { counted, html, type Html } from './html.ts';

/**
 * The insight pages' charts, inline SVG rendered on the server: no script, no external resource.
 * Each chart is an image with a title and a description for screen readers, each bar or point
 * carries its own title (a tooltip on hover) and its numbers as `data-` attributes, and the page
 * puts the same numbers in a table beside it.
 */

const WIDTH = 720;
const HEIGHT = 220;
const TOP = 16;
const BOTTOM = 22;
const LEFT = 44;
/** Series colours (8 classes in the stylesheet, `s0`…`s7`), the rest in `other`. */
export const SERIES_CLASSES = 8;

/** A round step for about four grid lines up to `max`. */
function gridStep(max: number): number {
  const raw = Math.max(1, max) / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  return Math.max(1, step);
}

const fmt = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

function grid(max: number, plot: number): Html[] {
  const step = gridStep(max);
  const top = Math.max(step, Math.ceil(max / step) * step);
  const lines: Html[] = [];
  for (let v = 0; v <= top; v += step) {
    const y = (TOP + plot - (v / top) * plot).toFixed(1);
    lines.push(
      html`<line class="grid" x1="${LEFT}" y1="${y}" x2="${WIDTH}" y2="${y}"></line><text class="tick" x="${LEFT - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${fmt.format(v)}</text>`,
    );
  }
  return lines;
}

function scaleTop(max: number): number {
  const step = gridStep(max);
  return Math.max(step, Math.ceil(max / step) * step);
}

/** One bar of a trend: a bucket, its count, and the count of each series value in it. */
export interface TrendBar {
  start: string;
  /** A short label for the axis. */
  label: string;
  count: number;
  /** Counts per series, in series order (absent: one plain bar). */
  parts?: number[];
  /** The bucket's posts outside the series. */
  other?: number;
}

/** Labels along the x axis: at most about eight, evenly spaced. */
function axisLabels(labels: string[], slot: number): Html[] {
  const every = Math.max(1, Math.ceil(labels.length / 8));
  return labels.flatMap((label, i) => {
    if (i % every !== 0) return [];
    // A label near the right edge ends at its bar rather than past the chart.
    const end = labels.length - i <= every;
    const x = LEFT + i * slot + (end ? slot : slot / 2);
    return [
      html`<text class="tick" x="${x.toFixed(1)}" y="${HEIGHT - 6}" text-anchor="${end && i > 0 ? 'end' : 'middle'}">${label}</text>`,
    ];
  });
}

/**
 * Post counts as bars, one per bucket, stacked by the breakdown's values when there are `series`
 * (then `other` on top). Each bar is a `g.bucket` with `data-start` and `data-count`.
 */
export function trendChart(bars: readonly TrendBar[], options: { title: string; series?: readonly string[] }): Html {
  const plot = HEIGHT - TOP - BOTTOM;
  const top = scaleTop(Math.max(0, ...bars.map((b) => b.count)));
  const slot = (WIDTH - LEFT) / Math.max(1, bars.length);
  const width = Math.max(1, slot * 0.8);
  const series = options.series ?? [];
  const groups = bars.map((bar, i) => {
    const x = (LEFT + i * slot + (slot - width) / 2).toFixed(1);
    let y = TOP + plot;
    const segments: Array<[string, number, string]> = bar.parts
      ? [
          ...bar.parts.map((n, j): [string, number, string] => [`s${j % SERIES_CLASSES}`, n, series[j] ?? '']),
          ['other', bar.other ?? 0, 'other'],
        ]
      : [['s0', bar.count, '']];
    const rects = segments.map(([cls, n, value]) => {
      const h = (n / top) * plot;
      y -= h;
      return html`<rect class="${cls}" x="${x}" y="${y.toFixed(1)}" width="${width.toFixed(1)}" height="${h.toFixed(1)}"${value ? html` data-value="${value}"` : ''} data-count="${n}"></rect>`;
    });
    const detail = bar.parts
      ? `: ${series.map((s, j) => `${s} ${bar.parts![j]}`).join(', ')}, other ${bar.other ?? 0}`
      : '';
    return html`<g class="bucket" data-start="${bar.start}" data-count="${bar.count}"><title>${bar.start}: ${counted(bar.count, 'post')}${detail}</title>${rects}</g>`;
  });
  const total = bars.reduce((a, b) => a + b.count, 0);
  const desc = `${bars.length} buckets from ${bars[0]?.start ?? ''} to ${bars.at(-1)?.start ?? ''}, ${counted(total, 'post')} in all, at most ${Math.max(0, ...bars.map((b) => b.count))} in one bucket.`;
  return html`<svg class="chart trend" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="trend-title trend-desc" xmlns="http://www.w3.org/2000/svg"><title id="trend-title">${options.title}</title><desc id="trend-desc">${desc}</desc>${grid(top, plot)}${groups}${axisLabels(
    bars.map((b) => b.label),
    slot,
  )}</svg>${series.length > 0 ? legend([...series, 'other']) : ''}`;
}

/** A legend of series swatches (the last one `other` when named so). */
export function legend(names: readonly string[]): Html {
  return html`<p class="legend">${names.map((name, j) => html`<span><span class="swatch ${name === 'other' ? 'other' : `s${j % SERIES_CLASSES}`}"></span>${name}</span>`)}</p>`;
}

/** One line of a line chart: its name and its points (time in epoch ms, value). */
export interface LineSeries {
  name: string;
  points: Array<{ at: number; value: number }>;
}

/**
 * Values over time as lines, one per series, on a shared time axis from the earliest to the
 * latest point. Each point is a `circle` with its own title and `data-at` / `data-value`.
 */
export function lineChart(series: readonly LineSeries[], options: { title: string; id: string }): Html {
  const plot = HEIGHT - TOP - BOTTOM;
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return html`<p class="muted">No observations in this period.</p>`;
  const t0 = Math.min(...all.map((p) => p.at));
  const t1 = Math.max(...all.map((p) => p.at));
  const top = scaleTop(Math.max(...all.map((p) => p.value)));
  const x = (at: number) => LEFT + (t1 === t0 ? (WIDTH - LEFT) / 2 : ((at - t0) / (t1 - t0)) * (WIDTH - LEFT - 8));
  const y = (v: number) => TOP + plot - (v / top) * plot;
  const day = (at: number) => new Date(at).toISOString().slice(0, 10);
  const lines = series.map((s, j) => {
    const cls = `s${j % SERIES_CLASSES}`;
    const path = s.points
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`)
      .join(' ');
    const dots = s.points.map(
      (p) =>
        html`<circle class="${cls}" cx="${x(p.at).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="2.5" data-at="${new Date(p.at).toISOString()}" data-value="${p.value}"><title>${s.name}, ${day(p.at)}: ${p.value.toLocaleString('en-US')}</title></circle>`,
    );
    return html`<g class="series" data-name="${s.name}"><path class="line ${cls}" d="${path}"></path>${dots}</g>`;
  });
  const ticks = [t0, t0 + (t1 - t0) / 2, t1].map(
    (at, i) =>
      html`<text class="tick" x="${x(at).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="${['start', 'middle', 'end'][i]}">${day(at)}</text>`,
  );
  const desc = `${series.map((s) => `${s.name}: ${s.points.length} points, from ${s.points[0]?.value ?? '—'} to ${s.points.at(-1)?.value ?? '—'}`).join('; ')}.`;
  return html`<svg class="chart lines" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${options.id}-title ${options.id}-desc" xmlns="http://www.w3.org/2000/svg"><title id="${options.id}-title">${options.title}</title><desc id="${options.id}-desc">${desc}</desc>${grid(top, plot)}${lines}${ticks}</svg>${series.length > 1 ? legend(series.map((s) => s.name)) : ''}`;
}
