import { html, type Html } from './html.ts';

/** One bar of the chart: a day, its requests, and how many of them were client errors. */
export interface ChartDay {
  day: string;
  requests: number;
  errors: number;
}

const WIDTH = 560;
const HEIGHT = 140;
const AXIS = 18;

/**
 * A bar chart of requests per day as inline SVG, rendered on the server: no script, no external
 * resource, readable by screen readers through its title and the table beside it.
 */
export function usageChart(days: readonly ChartDay[], title: string): Html {
  const max = Math.max(1, ...days.map((d) => d.requests));
  const slot = WIDTH / Math.max(1, days.length);
  const bar = Math.max(2, slot * 0.7);
  const plot = HEIGHT - AXIS;
  const bars = days.map((d, i) => {
    const x = (i * slot + (slot - bar) / 2).toFixed(1);
    const h = (d.requests / max) * plot;
    const e = (d.errors / max) * plot;
    const label = `${d.day}: ${d.requests} requests, ${d.errors} client errors`;
    return html`<g><title>${label}</title><rect class="ok" x="${x}" y="${(plot - h).toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}"></rect><rect class="err" x="${x}" y="${(plot - e).toFixed(1)}" width="${bar.toFixed(1)}" height="${e.toFixed(1)}"></rect></g>`;
  });
  const first = days[0]?.day ?? '';
  const last = days[days.length - 1]?.day ?? '';
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}" xmlns="http://www.w3.org/2000/svg"><title>${title}</title>${bars}<line x1="0" y1="${plot}" x2="${WIDTH}" y2="${plot}" class="axis"></line><text x="0" y="${HEIGHT - 4}">${first}</text><text x="${WIDTH}" y="${HEIGHT - 4}" text-anchor="end">${last}</text><text x="2" y="12">max ${max}/day</text></svg><p class="legend"><span><span class="swatch ok"></span>requests</span><span><span class="swatch err"></span>client errors (4xx)</span></p>`;
}
