import type { SavedSearch, WebhookEndpoint } from '../../contract/alerts.ts';
import type { DeliveryAttempt } from '../../services/alerts/endpoint-store.ts';
import { counted, html, type Html } from './html.ts';
import { dateTime, errorBox, layout, type PageContext } from './views.ts';

/** An endpoint as the page shows it: with its current failure, if it is failing. */
export type EndpointState = WebhookEndpoint & { failing_since: string | null; last_error: string | null };

/** What the alerts page shows. */
export interface AlertsPageState {
  endpoints: EndpointState[];
  /** The last deliveries of each endpoint, by endpoint id. */
  deliveries: ReadonlyMap<string, DeliveryAttempt[]>;
  searches: SavedSearch[];
  /** An endpoint just created, with its secret (shown this once). */
  created?: { id: string; url: string; secret: string };
  notice?: string;
  error?: string;
}

function postForm(ctx: PageContext, action: string, label: string, attrs: Html = html``): Html {
  return html`<form method="post" action="${ctx.base}${action}" class="inline"><input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit"${attrs}>${label}</button></form>`;
}

function deliveryList(attempts: DeliveryAttempt[]): Html {
  if (attempts.length === 0) return html`<p class="muted">No deliveries yet.</p>`;
  const rows = attempts.map(
    (a) =>
      html`<tr><td>${dateTime(a.at)}</td><td><code>${a.event_id}</code></td><td>${a.attempt}</td><td>${a.status ?? '—'}</td><td>${a.latency_ms} ms</td><td>${a.error ?? ''}</td></tr>`,
  );
  return html`<table class="deliveries"><thead><tr><th>When</th><th>Event</th><th>Attempt</th><th>Status</th><th>Latency</th><th>Error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function endpointSection(ctx: PageContext, endpoint: EndpointState, attempts: DeliveryAttempt[]): Html {
  const id = `/alerts/endpoints/${endpoint.id}`;
  const actions =
    endpoint.status === 'enabled'
      ? postForm(ctx, `${id}/test`, 'Send a test event')
      : postForm(ctx, `${id}/enable`, 'Re-enable');
  return html`<section class="endpoint" data-endpoint-id="${endpoint.id}"><h3><code>${endpoint.url}</code> <span class="status ${endpoint.status === 'enabled' ? 'active' : 'revoked'}">${endpoint.status}</span></h3>
${endpoint.description ? html`<p>${endpoint.description}</p>` : ''}${endpoint.disabled_reason ? html`<p class="error">${endpoint.disabled_reason}</p>` : ''}${endpoint.last_error && endpoint.status === 'enabled' ? html`<p class="error failing">Deliveries failing${endpoint.failing_since ? html` since ${dateTime(endpoint.failing_since)}` : ''}: ${endpoint.last_error}. They are retried until 24 h after each was queued.</p>` : ''}
<p>${actions} ${postForm(ctx, `${id}/delete`, 'Delete', html` class="danger" data-confirm="Delete this endpoint? Its saved searches keep their events for pulling."`)}</p>
<h4>Recent deliveries</h4>${deliveryList(attempts)}</section>`;
}

function searchRow(ctx: PageContext, search: SavedSearch): Html {
  const dropped =
    search.events_dropped > 0
      ? html`<p class="error">${search.events_dropped} matches dropped: it recorded its limit of events in 30 days; narrow it.</p>`
      : '';
  const rule = search.volume;
  const volume = rule
    ? html`<p class="volume">Volume per ${rule.interval} (${rule.time_zone}):${rule.above !== undefined ? ` above ${rule.above}` : ''}${rule.above !== undefined && rule.spike ? ';' : ''}${rule.spike ? ` a spike of ${rule.spike.factor}× the median of ${rule.spike.baseline_intervals}, from ${counted(rule.spike.min_count, 'post')}` : ''}${search.events.includes('posts') ? '' : ' (no event per post)'}</p>`
    : '';
  return html`<tr data-search-id="${search.id}"><td>${search.name}${dropped}${volume}</td><td><code>${JSON.stringify(search.post)}</code></td><td>${search.webhook_endpoint_id ? html`<code>${search.webhook_endpoint_id}</code>` : html`<span class="muted">pull only</span>`}</td><td>${dateTime(search.last_match_at)}</td><td>${postForm(ctx, `/alerts/searches/${search.id}/delete`, 'Delete', html` class="danger" data-confirm="Delete ${search.name}? Its events go with it."`)}</td></tr>`;
}

/** The alerts page: webhook endpoints with their deliveries, and saved searches. */
export function alertsPage(ctx: PageContext, state: AlertsPageState): Html {
  const created = state.created
    ? html`<section class="created" role="status"><h2>Your new endpoint</h2>
<p>Its signing secret, shown only this once: verify each delivery's <code>webhook-signature</code> with it.</p>
<div class="secret"><code id="new-secret">${state.created.secret}</code><button type="button" class="copy" data-copy="new-secret" hidden>Copy</button></div></section>`
    : '';
  const endpoints = state.endpoints.map((e) => endpointSection(ctx, e, state.deliveries.get(e.id) ?? []));
  const searches = state.searches.map((s) => searchRow(ctx, s));
  return layout(
    ctx,
    'Alerts',
    html`<h1>Alerts</h1>${errorBox(state.error)}${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}${created}
<h2>Webhook endpoints</h2>
${endpoints.length > 0 ? endpoints : html`<p class="muted">No endpoints yet.</p>`}
<form method="post" action="${ctx.base}/alerts/endpoints" class="card">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<label>Endpoint URL <input type="url" name="url" maxlength="2048" required placeholder="https://example.com/hooks"></label>
<label>Description <span class="hint">(optional)</span> <input type="text" name="description" maxlength="500"></label>
<button type="submit">Add endpoint</button></form>
<h2>Saved searches</h2>
<p class="hint">Created with the API (<code>POST /v1/social/saved-searches</code>); each new match is pushed to its endpoint and kept for pulling.</p>
${
  searches.length > 0
    ? html`<table class="searches"><thead><tr><th>Name</th><th>Search</th><th>Endpoint</th><th>Last match</th><th></th></tr></thead><tbody>${searches}</tbody></table>`
    : html`<p class="muted">No saved searches yet.</p>`
}`,
  );
}
