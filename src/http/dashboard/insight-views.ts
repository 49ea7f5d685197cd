import type { Account, PostSummary } from '../../contract/api.ts';
import type { WebhookEndpoint } from '../../contract/alerts.ts';
import type { PostMatch, Snippet } from '../../contract/search-extras.ts';
import { SUGGEST_KINDS } from '../../query/suggest-request.ts';
import type { TaxonomyName } from '../../query/taxonomies.ts';
import type { TaxonomyList } from '../../services/names/taxonomy-service.ts';
import type { CountsView } from '../../services/search/counts-service.ts';
import { lineChart, trendChart, type LineSeries } from './charts.ts';
import { counted, html, type Html } from './html.ts';
import { errorBox, layout, type PageContext } from './views.ts';

/**
 * The Explore form's pickers, in the order shown: each lists the dictionary of its name
 * (`GET /v1/social/taxonomies/{name}`) and sets the filter that dictionary lists.
 */
export const EXPLORE_PICKERS = [
  'niches',
  'topics',
  'languages',
  'countries',
] as const satisfies readonly TaxonomyName[];
export type PickerName = (typeof EXPLORE_PICKERS)[number];
/** Each picker's dictionary: IDs, labels and counts, most carried first. */
export type PickerOptions = Record<PickerName, TaxonomyList>;

const PICKER_LABELS: Record<PickerName, string> = {
  niches: 'Author niches',
  topics: 'Topics',
  languages: 'Languages',
  countries: 'Author countries',
};

/** The Explore form as the holder filled it (strings as typed, lists as picked). */
export interface ExploreForm {
  q: string;
  niches: string[];
  topics: string[];
  languages: string[];
  countries: string[];
  from: string;
  to: string;
  min_followers: string;
  max_followers: string;
  interval: CountsView['interval'];
  by: string;
  tz: string;
}

/** What the Explore page shows besides its form. */
export interface ExploreState {
  form: ExploreForm;
  /** The pickers' entries. */
  options: PickerOptions;
  breakdowns: readonly string[];
  /** The search's `post` scope as the API takes it (what "save as alert" saves). */
  post?: Record<string, unknown>;
  posts?: PostSummary[];
  matches?: PostMatch[];
  counts?: CountsView;
  /** The search's query with its misspelt words corrected ("did you mean"), when it found few posts. */
  suggestedQuery?: string;
  /** The query as the search searched it, when it corrected words no post carries. */
  correctedQuery?: string;
  endpoints: WebhookEndpoint[];
  error?: string;
}

/** A picker: the dictionary's labels shown, its IDs sent; a picked ID it does not list stays picked. */
function picker(name: PickerName, list: TaxonomyList, picked: string[]): Html {
  const entries = [
    ...list.data,
    ...picked.filter((id) => !list.data.some((e) => e.id === id)).map((id) => ({ id, label: id, count: 0 })),
  ];
  return html`<div class="picker"><label for="pick-${name}">${PICKER_LABELS[name]} <span class="hint">(${list.counted})</span></label><select id="pick-${name}" name="${name}" multiple size="6">${entries.map(
    (e) =>
      html`<option value="${e.id}"${picked.includes(e.id) ? html` selected` : ''}>${e.label} · ${e.count.toLocaleString('en-US')}</option>`,
  )}</select></div>`;
}

/** Every kind of name the typeahead suggests, in the order it answers them. */
const ALL_KINDS = Object.keys(SUGGEST_KINDS).join(',');

/**
 * A text input the page's script (assets/typeahead.js) turns into a combobox asking
 * `{base}/suggest` as one types; without the script it is a plain input of its form.
 */
function typeaheadBox(
  ctx: PageContext,
  options: { id: string; label: string; kinds: string; limit: number; word: boolean; className?: string },
  input: Html,
): Html {
  return html`<div class="combo${options.className ? ` ${options.className}` : ''}" data-suggest="${ctx.base}/suggest" data-accounts="${ctx.base}/accounts/" data-kinds="${options.kinds}" data-limit="${options.limit}"${options.word ? html` data-complete="word"` : ''}><label for="${options.id}">${options.label}</label>${input}</div>`;
}

/** "Go to account": a handle, or with the script, a name chosen from the suggestions. */
function gotoForm(ctx: PageContext): Html {
  return html`<form method="get" action="${ctx.base}/accounts" class="goto" role="search" aria-label="Go to an account">${typeaheadBox(
    ctx,
    { id: 'goto-handle', label: 'Go to account', kinds: 'accounts', limit: 8, word: false },
    html`<input type="search" id="goto-handle" name="handle" maxlength="200" required placeholder="@handle">`,
  )}<button type="submit">Open</button></form>`;
}

function exploreForm(ctx: PageContext, state: ExploreState): Html {
  const f = state.form;
  const select = (name: string, values: readonly string[], current: string, text = (v: string) => v) =>
    html`<select name="${name}">${values.map((v) => html`<option value="${v}"${v === current ? html` selected` : ''}>${text(v)}</option>`)}</select>`;
  return html`<form method="get" action="${ctx.base}/explore" class="explore">
${typeaheadBox(
  ctx,
  { id: 'explore-q', label: 'Query', kinds: ALL_KINDS, limit: 3, word: true, className: 'wide' },
  html`<input type="search" id="explore-q" name="q" maxlength="2000" value="${f.q}" placeholder="e.g. night-time skincare routine, #tag, @handle">`,
)}
${EXPLORE_PICKERS.map((name) => picker(name, state.options[name], f[name]))}
<fieldset><legend>Posted</legend><label>From <input type="date" name="from" value="${f.from}"></label><label>To <input type="date" name="to" value="${f.to}"></label><label>Time zone <input type="text" name="tz" value="${f.tz}" maxlength="64"></label></fieldset>
<fieldset><legend>Author followers</legend><label>At least <input type="number" name="min_followers" min="0" value="${f.min_followers}"></label><label>At most <input type="number" name="max_followers" min="0" value="${f.max_followers}"></label></fieldset>
<fieldset><legend>Chart</legend><label>Interval ${select('interval', ['hour', 'day', 'week', 'month'], f.interval)}</label><label>Break down by ${select('by', ['', ...state.breakdowns], f.by, (v) => v || 'nothing')}</label></fieldset>
<button type="submit">Explore</button></form>`;
}

/** The Explore page's address for a filled form (a search is a link). */
export function exploreHref(base: string, form: ExploreForm): string {
  const params = new URLSearchParams();
  // Object.entries answers [string, any]: an ExploreForm's fields are strings or string lists.
  for (const [name, value] of Object.entries(form) as Array<[string, string | string[]]>)
    for (const v of [value].flat()) if (v !== '') params.append(name, v);
  return `${base}/explore?${params.toString()}`;
}

/**
 * "Showing results for …" (what the search searched, its misspelt words corrected) and "Did you
 * mean …?" (a suggestion as a link running the same search with it).
 */
function didYouMean(ctx: PageContext, state: ExploreState): Html {
  const showing =
    state.correctedQuery === undefined
      ? html``
      : html`<p class="corrected-query">Showing results for <strong>${state.correctedQuery}</strong></p>`;
  if (state.suggestedQuery === undefined || !state.posts || state.posts.length >= 3) return showing;
  return html`${showing}<p class="did-you-mean">Did you mean <a href="${exploreHref(ctx.base, { ...state.form, q: state.suggestedQuery })}">${state.suggestedQuery}</a>?</p>`;
}

/** A snippet with its highlighted spans (offsets in code points) marked. */
function snippet(s: Snippet): Html {
  const chars = Array.from(s.text);
  const parts: Html[] = [];
  let at = 0;
  for (const h of s.highlights) {
    parts.push(html`${chars.slice(at, h.start).join('')}<mark>${chars.slice(h.start, h.end).join('')}</mark>`);
    at = h.end;
  }
  parts.push(html`${chars.slice(at).join('')}`);
  return html`<q>${parts}</q>`;
}

function postItem(ctx: PageContext, post: PostSummary, match: PostMatch | undefined): Html {
  const evidence = match
    ? html`<p class="evidence">${match.retrieved_by ? html`<span class="tag">${match.retrieved_by === 'both' ? 'words and meaning' : match.retrieved_by === 'lexical' ? 'words' : 'meaning'}</span>` : ''}${match.fields.flatMap((f) => f.snippets.slice(0, 1).map((s) => html` <span class="hint">${f.field}</span> ${snippet(s)}`))}</p>`
    : '';
  return html`<li class="post" data-post-id="${post.id}"><p><a href="${ctx.base}/accounts/@${post.author.handle}">@${post.author.handle}</a> · ${post.posted_at.slice(0, 10)} · ${post.format}${post.views === null ? '' : html` · ${counted(post.views, 'view')}`}</p><p class="caption">${post.caption.slice(0, 240)}${post.caption.length > 240 ? '…' : ''}</p>${evidence}</li>`;
}

function countsSection(counts: CountsView, by: string): Html {
  const series = counts.buckets[0]?.breakdown?.map((b) => b.value) ?? [];
  const label = (start: string) =>
    counts.interval === 'hour'
      ? start.slice(5, 16).replace('T', ' ')
      : start.slice(0, counts.interval === 'month' ? 7 : 10);
  const bars = counts.buckets.map((b) => ({
    start: b.start,
    label: label(b.start),
    count: b.count,
    ...(b.breakdown && { parts: b.breakdown.map((v) => v.count), other: b.other ?? 0 }),
  }));
  const rows = counts.buckets.map(
    (b) =>
      html`<tr><td>${b.start}</td><td>${b.count}</td>${b.breakdown ? html`${b.breakdown.map((v) => html`<td>${v.count}</td>`)}<td>${b.other ?? 0}</td>` : ''}</tr>`,
  );
  return html`<section class="trend-section"><h2>${counted(counts.total, 'post')}, by ${counts.interval} (${counts.time_zone})${by ? ` and ${by}` : ''}</h2>
${trendChart(bars, { title: `Matching posts per ${counts.interval}${by ? `, by ${by}` : ''}`, series })}
<details><summary>The numbers</summary><table class="counts-table"><thead><tr><th>Start</th><th>Posts</th>${series.map((s) => html`<th>${s}</th>`)}${series.length > 0 ? html`<th>other</th>` : ''}</tr></thead><tbody>${rows}</tbody></table></details></section>`;
}

function saveForm(ctx: PageContext, state: ExploreState): Html {
  if (!state.post) return html``;
  if (state.endpoints.length === 0)
    return html`<p class="hint">To get new matches pushed, <a href="${ctx.base}/alerts">add a webhook endpoint</a> first, then save this search as an alert.</p>`;
  return html`<form method="post" action="${ctx.base}/explore/save" class="card save-alert"><h2>Save as alert</h2>
<input type="hidden" name="_csrf" value="${ctx.csrf}"><input type="hidden" name="post" value="${JSON.stringify(state.post)}">
<label>Name <input type="text" name="name" maxlength="200" required value="${state.form.q || 'Explore search'}"></label>
<label>Push new matches to <select name="webhook_endpoint_id">${state.endpoints.map((e) => html`<option value="${e.id}">${e.url}</option>`)}</select></label>
<fieldset class="volume-rule"><legend>Volume rule (optional)</legend><input type="hidden" name="volume_time_zone" value="${state.form.tz || 'UTC'}">
<label>Count posts per <select name="volume_interval"><option value="">no volume rule</option><option value="hour">hour</option><option value="day">day</option></select></label>
<label>Alert above <input type="number" name="volume_above" min="1" step="1" placeholder="posts"></label>
<label>Or a spike of <input type="number" name="volume_factor" min="1.5" max="100" step="0.1" placeholder="e.g. 3">× the median of the last <input type="number" name="volume_baseline" min="7" max="28" step="1" value="7"> windows, from <input type="number" name="volume_min_count" min="1" step="1" value="10"> posts</label>
<label class="check"><input type="checkbox" name="posts" value="on" checked> also push each new matching post</label>
<p class="hint">Windows in ${state.form.tz || 'UTC'}, by the posts' publication time; one event per window at most.</p></fieldset>
<button type="submit">Save as alert</button></form>`;
}

/** The Explore page: the form, the volume chart of the search, its first posts with their evidence, "save as alert". */
export function explorePage(ctx: PageContext, state: ExploreState): Html {
  const matches = new Map((state.matches ?? []).map((m) => [m.id, m]));
  const results = state.posts
    ? html`<h2>First posts</h2>${state.posts.length > 0 ? html`<ol class="posts">${state.posts.map((p) => postItem(ctx, p, matches.get(p.id)))}</ol>` : html`<p class="muted">No post matches.</p>`}`
    : state.error
      ? ''
      : html`<p class="hint">Type a query or pick a filter to see how many posts match over time, and which.</p>`;
  return layout(
    ctx,
    'Explore',
    html`<div class="page-head"><h1>Explore</h1>${gotoForm(ctx)}</div>${errorBox(state.error)}${exploreForm(ctx, state)}${didYouMean(ctx, state)}${state.counts ? countsSection(state.counts, state.form.by) : ''}${results}${saveForm(ctx, state)}`,
    { scripts: ['typeahead.js'] },
  );
}

/** What the account page shows. */
export interface AccountPageState {
  account: Account;
  followers: LineSeries[];
  views: LineSeries[];
  lookalikes: Account[] | { unavailable: string };
}

function fact(label: string, value: string | number | null | undefined): Html {
  return value === null || value === undefined || value === ''
    ? html``
    : html`<div><dt>${label}</dt><dd>${typeof value === 'number' ? value.toLocaleString('en-US') : value}</dd></div>`;
}

/** The account page: its profile, its followers and its posts' views over time, and its lookalikes. */
export function accountPage(ctx: PageContext, state: AccountPageState): Html {
  const a = state.account;
  const growth = (v: unknown) => (typeof v === 'number' ? `${(v * 100).toFixed(1)} %` : null);
  // The account as the API renders it: fields after the spec's (additions) are read by name.
  const extra = a as Account & Record<string, unknown>;
  const lookalikes = Array.isArray(state.lookalikes)
    ? state.lookalikes.length > 0
      ? html`<ul class="lookalikes">${state.lookalikes.map((l) => html`<li><a href="${ctx.base}/accounts/@${l.handle}">@${l.handle}</a> ${l.display_name} · ${counted(l.followers_count, 'follower')}${l.niches && l.niches.length > 0 ? ` · ${l.niches.join(', ')}` : ''}</li>`)}</ul>`
      : html`<p class="muted">No lookalikes found.</p>`
    : html`<p class="muted">${state.lookalikes.unavailable}</p>`;
  return layout(
    ctx,
    `@${a.handle}`,
    html`<h1>${a.display_name} <span class="muted">@${a.handle}</span>${a.is_verified ? html` <span class="tag">verified</span>` : ''}</h1>
<p>${a.biography}</p>
<dl class="facts">${fact('Followers', a.followers_count)}${fact('Following', a.following_count)}${fact('Posts', a.posts_count)}${fact('Growth, 30 days', growth(extra.followers_growth_30d))}${fact('Type', a.account_type)}${fact('Category', a.category_label)}${fact('Niches', a.niches?.join(', '))}${fact('Languages', a.publishing_languages?.join(', '))}${fact('Located', a.declared_locations.map((l) => l.country_code).join(', '))}</dl>
${a.publishing_summary ? html`<p class="hint">${a.publishing_summary}</p>` : ''}
<h2>Followers</h2>${lineChart(state.followers, { title: `Followers of @${a.handle}, last observation of each day`, id: 'followers' })}
<h2>Views of its newest posts</h2>${lineChart(state.views, { title: `Views of the newest posts of @${a.handle}, by day`, id: 'views' })}
<h2>Lookalikes</h2>${lookalikes}`,
  );
}
