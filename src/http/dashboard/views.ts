import type { CreatedKey } from '../../services/keys/key-service.ts';
import type { HolderKey, HolderKeyUsage } from '../../services/keys/holder-keys.ts';
import type { SignUpMode } from '../../services/keys/holder-service.ts';
import { USAGE_OPERATIONS, type UsageOperation } from '../../services/keys/usage-recorder.ts';
import { html, type Html } from './html.ts';
import { usageChart } from './usage-chart.ts';

/** What every page knows: who is signed in (if anyone) and the form token. */
export interface PageContext {
  holder: string | null;
  csrf: string;
  /** The dashboard's base path, e.g. `/dashboard`. */
  base: string;
  /** Fingerprint appended to asset URLs so a new release is fetched fresh. */
  assetVersion: string;
}

/**
 * The page frame: head, navigation for the signed-in holder, footer. `scripts`: the page's own
 * scripts from the dashboard's assets, beside dashboard.js (all optional enhancements).
 */
export function layout(
  ctx: PageContext,
  title: string,
  body: Html,
  options: { scripts?: readonly string[] } = {},
): Html {
  const nav = ctx.holder
    ? html`<nav><a href="${ctx.base}/keys">API keys</a><a href="${ctx.base}/usage">Usage</a><a href="${ctx.base}/alerts">Alerts</a><a href="${ctx.base}/explore">Explore</a><span class="who">${ctx.holder}</span><form method="post" action="${ctx.base}/sign-out" class="inline"><input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit" class="link">Sign out</button></form></nav>`
    : html`<nav><a href="${ctx.base}/sign-in">Sign in</a><a href="${ctx.base}/sign-up">Sign up</a></nav>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Social Search</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ctx.base}/assets/dashboard.css?v=${ctx.assetVersion}">
<script src="${ctx.base}/assets/dashboard.js?v=${ctx.assetVersion}" defer></script>
${(options.scripts ?? []).map(
  (name) => html`<script src="${ctx.base}/assets/${name}?v=${ctx.assetVersion}" defer></script>
`,
)}</head><body><header><a class="brand" href="${ctx.base}">Social Search</a>${nav}</header>
<main>${body}</main>
<footer>API reference: <a href="/docs">/docs</a> · <a href="/openapi.json">OpenAPI</a></footer></body></html>`;
}

/** A form's error, announced. */
export function errorBox(message: string | undefined): Html {
  return message ? html`<p class="error" role="alert">${message}</p>` : html``;
}

/** The sign-in form. */
export function signInPage(ctx: PageContext, state: { email?: string; error?: string; notice?: string } = {}): Html {
  return layout(
    ctx,
    'Sign in',
    html`<h1>Sign in</h1>${errorBox(state.error)}${state.notice ? html`<p class="notice">${state.notice}</p>` : ''}
<form method="post" action="${ctx.base}/sign-in" class="card">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<label>Email <input type="email" name="email" autocomplete="username" required value="${state.email ?? ''}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>
<p>No account yet? <a href="${ctx.base}/sign-up">Sign up</a>.</p>`,
  );
}

/** The sign-up form; the invitation field shows unless sign-up is open to anyone. */
export function signUpPage(
  ctx: PageContext,
  state: { mode: SignUpMode; email?: string; invitation?: string; error?: string },
): Html {
  if (state.mode === 'closed') {
    return layout(
      ctx,
      'Sign up',
      html`<h1>Sign up</h1>${errorBox(state.error)}<p>Sign-up is closed on this service. Ask its operator for an invitation.</p>`,
    );
  }
  const invitation =
    state.mode === 'invite'
      ? html`<label>Invitation code <input type="text" name="invitation" required autocomplete="off" value="${state.invitation ?? ''}"></label>`
      : html`<label>Invitation code <span class="hint">(only if you were given one)</span> <input type="text" name="invitation" autocomplete="off" value="${state.invitation ?? ''}"></label>`;
  return layout(
    ctx,
    'Sign up',
    html`<h1>Create your account</h1>${errorBox(state.error)}
<form method="post" action="${ctx.base}/sign-up" class="card">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<label>Email <input type="email" name="email" autocomplete="username" required value="${state.email ?? ''}"></label>
<label>Password <span class="hint">(at least 10 characters)</span> <input type="password" name="password" autocomplete="new-password" minlength="10" required></label>
${invitation}
<button type="submit">Create account</button></form>
<p>Already have an account? <a href="${ctx.base}/sign-in">Sign in</a>.</p>`,
  );
}

/** A UTC time to the minute, or "never". */
export function dateTime(iso: string | null): Html {
  return iso
    ? html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
    : html`<span class="muted">never</span>`;
}

function limit(n: number, own: number | null): Html {
  const text = n === 0 ? 'unlimited' : `${n}/min`;
  return own === null ? html`${text}` : html`${text} <span class="hint">(set for this key)</span>`;
}

function keyRow(ctx: PageContext, key: HolderKey): Html {
  const action =
    key.status === 'active'
      ? html`<form method="post" action="${ctx.base}/keys/${key.id}/revoke" class="inline"><input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit" class="danger" data-confirm="Revoke ${key.name}? Requests with it fail at once.">Revoke</button></form>`
      : html`<span class="muted">revoked ${dateTime(key.revoked_at)}</span>`;
  return html`<tr data-key-id="${key.id}"><td>${key.name}</td><td><code>${key.prefix}</code></td><td>${key.scopes.join(', ')}</td><td>${dateTime(key.created_at)}</td><td>${dateTime(key.lastUsedAt)}</td><td><span class="status ${key.status}">${key.status}</span></td><td><span class="hint">searches</span> ${limit(key.effectiveLimits.search, key.limits.search)}<br><span class="hint">reads</span> ${limit(key.effectiveLimits.read, key.limits.read)}</td><td>${action}</td></tr>`;
}

function createdBanner(created: CreatedKey): Html {
  return html`<section class="created" role="status"><h2>Your new key “${created.name}”</h2>
<p>Copy it now: this is the only time it is shown. Store it as a secret.</p>
<div class="secret"><code id="new-key">${created.key}</code><button type="button" class="copy" data-copy="new-key" hidden>Copy</button></div>
<p class="hint">Use it as <code>Authorization: Bearer ${created.key.slice(0, 12)}…</code></p></section>`;
}

/** The keys page: the holder's keys, the create form, and a new key's secret once. */
export function keysPage(
  ctx: PageContext,
  state: { keys: HolderKey[]; created?: CreatedKey; notice?: string; error?: string },
): Html {
  const rows = state.keys.map((k) => keyRow(ctx, k));
  return layout(
    ctx,
    'API keys',
    html`<h1>API keys</h1>${errorBox(state.error)}${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}${state.created ? createdBanner(state.created) : ''}
${
  rows.length > 0
    ? html`<table class="keys"><thead><tr><th>Name</th><th>Key</th><th>Scopes</th><th>Created</th><th>Last used</th><th>Status</th><th>Limits</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="muted">No keys yet. Create your first one below.</p>`
}
<h2>Create a key</h2>
<form method="post" action="${ctx.base}/keys" class="card">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<label>Name <input type="text" name="name" maxlength="100" required placeholder="e.g. production crawler"></label>
<fieldset><legend>Scopes</legend>
<label class="check"><input type="checkbox" name="scopes" value="search" checked> search <span class="hint">(searches and reads)</span></label>
<label class="check"><input type="checkbox" name="scopes" value="ingest"> ingest <span class="hint">(the intake pipeline)</span></label></fieldset>
<button type="submit">Create key</button></form>`,
  );
}

/**
 * The usage table's operation columns, grouped under a heading each (consecutive in
 * `USAGE_OPERATIONS`' order): a short heading under its group, the full name as its title.
 */
const USAGE_COLUMNS: Record<UsageOperation, { group: string; short: string; name: string }> = {
  search_posts: { group: 'Search', short: 'posts', name: 'Search posts' },
  search_accounts: { group: 'Search', short: 'accounts', name: 'Search accounts' },
  get_post: { group: 'Get', short: 'post', name: 'Get post' },
  get_account: { group: 'Get', short: 'account', name: 'Get account' },
  lookup_posts: { group: 'Lookup', short: 'posts', name: 'Look up posts by list' },
  lookup_accounts: { group: 'Lookup', short: 'accounts', name: 'Look up accounts by list' },
  suggest: { group: 'Names', short: 'typeahead', name: 'Typeahead (suggest)' },
  taxonomies: { group: 'Names', short: 'dictionaries', name: 'Dictionaries (taxonomies)' },
  post_facets: { group: 'Facets', short: 'posts', name: 'Post facets' },
  account_facets: { group: 'Facets', short: 'accounts', name: 'Account facets' },
  post_counts: { group: 'Counts', short: 'posts', name: 'Post counts' },
  intake: { group: 'Intake', short: 'intake', name: 'Intake (observations)' },
};

/** The operations' groups, in column order. */
function usageGroups(): Array<{ name: string; operations: UsageOperation[] }> {
  const groups: Array<{ name: string; operations: UsageOperation[] }> = [];
  for (const op of USAGE_OPERATIONS) {
    const name = USAGE_COLUMNS[op].group;
    const last = groups[groups.length - 1];
    if (last?.name === name) last.operations.push(op);
    else groups.push({ name, operations: [op] });
  }
  return groups;
}

/**
 * The usage table: a day per row, a column per operation grouped two levels deep (a group
 * alone in its group spans both header rows), then all requests, 4xx and 429. Zeros are quiet,
 * so the days' real traffic stands out; every number stays in its cell.
 */
function usageTable(days: HolderKeyUsage['days']): Html {
  const groups = usageGroups();
  const cell = (n: number) => (n === 0 ? html`<td class="zero">0</td>` : html`<td>${n}</td>`);
  const rows = [...days]
    .reverse()
    .map(
      (d) =>
        html`<tr><td>${d.day}</td>${USAGE_OPERATIONS.map((op) => cell(d.byOperation[op]))}${cell(d.requests)}${cell(d.clientErrors)}${cell(d.rateLimited)}</tr>`,
    );
  const top = groups.map((g) => {
    const only = g.operations.length === 1 ? USAGE_COLUMNS[g.operations[0]!] : null;
    return only
      ? html`<th scope="col" rowspan="2" title="${only.name}">${g.name}</th>`
      : html`<th scope="colgroup" colspan="${g.operations.length}">${g.name}</th>`;
  });
  const sub = groups
    .filter((g) => g.operations.length > 1)
    .flatMap((g) =>
      g.operations.map((op) => html`<th scope="col" title="${USAGE_COLUMNS[op].name}">${USAGE_COLUMNS[op].short}</th>`),
    );
  const cols = groups.map((g) => html`<colgroup span="${g.operations.length}"></colgroup>`);
  return html`<div class="table-scroll"><table class="usage-table"><colgroup span="1"></colgroup>${cols}<colgroup span="3" class="totals"></colgroup>
<thead><tr><th scope="col" rowspan="2">Day (UTC)</th>${top}<th scope="colgroup" colspan="3">Requests</th></tr>
<tr>${sub}<th scope="col" title="All requests">all</th><th scope="col" title="Client errors (4xx), 429 included">4xx</th><th scope="col" title="Rate limited (429)">429</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** Per-key usage per day: a chart and a table for each key. */
export function usagePage(ctx: PageContext, state: { usage: HolderKeyUsage[]; days: number }): Html {
  const sections = state.usage.map(({ key, days }) => {
    const total = days.reduce((a, d) => a + d.requests, 0);
    const chart = usageChart(
      days.map((d) => ({ day: d.day, requests: d.requests, errors: d.clientErrors })),
      `Requests per day with ${key.name}`,
    );
    return html`<section class="usage" data-key-id="${key.id}"><h2>${key.name} <code>${key.prefix}</code> <span class="status ${key.status}">${key.status}</span></h2>
<p>${total} requests in the last ${state.days} days · search limit ${limit(key.effectiveLimits.search, key.limits.search)}</p>${chart}
${usageTable(days)}</section>`;
  });
  return layout(
    ctx,
    'Usage',
    html`<h1>Usage</h1><p class="hint">Requests per key per day (UTC), updated within a few seconds. 4xx counts client errors, 429 included.</p>
<form method="get" action="${ctx.base}/usage" class="inline"><label>Period <select name="days">${[7, 14, 30, 90].map((d) => html`<option value="${d}"${d === state.days ? html` selected` : ''}>${d} days</option>`)}</select></label> <button type="submit">Show</button></form>
${sections.length > 0 ? sections : html`<p class="muted">No keys yet.</p>`}`,
  );
}

/** A page for errors outside the forms (404, 403 on a stale form, 503). */
export function errorPage(ctx: PageContext, status: number, message: string): Html {
  return layout(
    ctx,
    `Error ${status}`,
    html`<h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1><p class="error" role="alert">${message}</p><p><a href="${ctx.base}">Back to the dashboard</a></p>`,
  );
}
