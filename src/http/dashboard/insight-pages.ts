import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler, RouteShorthandOptions } from 'fastify';
import { DateTime } from 'luxon';
import { z } from 'zod';
import type { Account } from '../../contract/api.ts';
import { formatIssues } from '../../contract/observations.ts';
import { DomainError, ValidationFailedError } from '../../internal/errors.ts';
import { createSavedSearchSchema } from '../../query/alert-request.ts';
import { canonicalTimeZone, COUNT_INTERVALS } from '../../query/count-window.ts';
import { BREAKDOWN_FIELDS, postCountsRequestSchema } from '../../query/counts-request.ts';
import { parseAccountSearchRequest, parsePostSearchRequest } from '../../query/search-request.ts';
import { TAXONOMIES } from '../../query/taxonomies.ts';
import type { AccountService } from '../../services/accounts/account-service.ts';
import type { AlertService } from '../../services/alerts/alert-service.ts';
import type { PostService } from '../../services/posts/post-service.ts';
import type { PostCountsService } from '../../services/search/counts-service.ts';
import type { AccountSearchService, PostSearchService } from '../../services/search/search-service.ts';
import type { SuggestService } from '../../services/names/suggest-service.ts';
import type { TaxonomyService } from '../../services/names/taxonomy-service.ts';
import type { LineSeries } from './charts.ts';
import {
  accountPage,
  EXPLORE_PICKERS,
  explorePage,
  type ExploreForm,
  type ExploreState,
  type PickerOptions,
} from './insight-views.ts';
import { parseForm } from './forms.ts';
import { sendPage, type PageContextOf } from './page.ts';
import { registerSuggestRoute } from './suggest-route.ts';
import type { RouteRateLimit } from '../plugins/rate-limit.ts';

/** The services the Explore and account pages call, as the API's routes call them. */
export interface InsightServices {
  postSearch: PostSearchService;
  postCounts: PostCountsService;
  posts: PostService;
  accounts: AccountService;
  accountSearch: AccountSearchService;
  /** The pickers' entries (the dictionaries). */
  taxonomies: Pick<TaxonomyService, 'list'>;
  /** Typeahead (the `/dashboard/suggest` route of the Explore page's script). */
  suggest: SuggestService;
}

const list = z
  .union([z.string().max(200), z.array(z.string().max(200)).max(50)])
  .optional()
  .transform((v) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).filter((s) => s.length > 0)));
const text = (max: number, fallback = '') => z.string().max(max).catch(fallback).default(fallback);

/** The Explore form, as a GET query (a search is a link one can keep and share). */
const exploreQuery = z.object({
  q: text(2000),
  niches: list.catch([]),
  topics: list.catch([]),
  languages: list.catch([]),
  countries: list.catch([]),
  from: text(10),
  to: text(10),
  min_followers: text(15),
  max_followers: text(15),
  interval: z.enum(COUNT_INTERVALS).catch('day').default('day'),
  by: text(40),
  tz: text(64, 'UTC'),
});

const gotoQuery = z.object({ handle: text(200) });

const saveForm = z.object({
  _csrf: z.string().max(200).optional(),
  name: z.string().max(200, { error: 'the name may have at most 200 characters' }).default(''),
  post: z.string().max(12_000, { error: 'the search is too long to save: run a shorter one' }).default('{}'),
  webhook_endpoint_id: z.string().max(100, { error: 'not a webhook endpoint' }).default(''),
  volume_interval: z.string().max(10, { error: 'expected "hour" or "day"' }).default(''),
  volume_time_zone: z.string().max(64, { error: 'not a time zone' }).default('UTC'),
  volume_above: z.string().max(20, { error: 'not a number' }).default(''),
  volume_factor: z.string().max(20, { error: 'not a number' }).default(''),
  volume_baseline: z.string().max(20, { error: 'not a number' }).default(''),
  volume_min_count: z.string().max(20, { error: 'not a number' }).default(''),
  /** The checkbox: present when checked (each new post pushed too). */
  posts: z.string().max(10).optional(),
});

/** A number typed in a form (NaN when it is not one: the API's schema names the field). */
const typed = (value: string) => (value.trim() === '' ? undefined : Number(value));

/** The volume rule and events of the save form, in the API's shape (nothing without an interval). */
function volumeOf(form: z.infer<typeof saveForm>): Record<string, unknown> {
  if (form.volume_interval === '') return {};
  const above = typed(form.volume_above);
  const factor = typed(form.volume_factor);
  return {
    volume: {
      interval: form.volume_interval,
      time_zone: form.volume_time_zone || 'UTC',
      ...(above !== undefined && { above }),
      ...(factor !== undefined && {
        spike: {
          factor,
          baseline_intervals: typed(form.volume_baseline) ?? 7,
          min_count: typed(form.volume_min_count) ?? 10,
        },
      }),
    },
    events: form.posts ? ['posts', 'volume'] : ['volume'],
  };
}

/** Posts shown under the chart, and the newest posts whose views the account page draws. */
const FIRST_POSTS = 20;
const NEWEST_POSTS = 5;
/** How long the pickers' entries (the dictionaries, with counts) are reused. */
const OPTIONS_TTL_MS = 5 * 60_000;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A day of the form in the time zone, as the UTC instant the filter grammar takes. */
function dayStart(day: string, zone: string, plusDays = 0): string {
  if (!DATE.test(day)) throw new ValidationFailedError(`${day}: expected a date such as 2026-10-01`);
  const at = DateTime.fromISO(day, { zone }).plus({ days: plusDays });
  if (!at.isValid) throw new ValidationFailedError(`${day}: not a date`);
  return at.toUTC().toISO({ suppressMilliseconds: true });
}

function followers(value: string, label: string): number | undefined {
  if (value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new ValidationFailedError(`${label}: expected a whole number of followers`);
  return n;
}

/** The `post` scope of the API's search for a filled form (null when it asks nothing). */
export function exploreScope(form: ExploreForm): Record<string, unknown> | null {
  const zone = canonicalTimeZone(form.tz);
  if (zone === null) throw new ValidationFailedError(`Time zone: expected an IANA name such as Europe/Paris or UTC`);
  const posted = {
    ...(form.from && { gte: dayStart(form.from, zone) }),
    ...(form.to && { lt: dayStart(form.to, zone, 1) }),
  };
  const gte = followers(form.min_followers, 'At least');
  const lte = followers(form.max_followers, 'At most');
  const filters: Record<string, unknown> = { ...(Object.keys(posted).length > 0 && { posted_at: posted }) };
  const author: Record<string, unknown> = {
    ...((gte !== undefined || lte !== undefined) && {
      followers_count: { ...(gte !== undefined && { gte }), ...(lte !== undefined && { lte }) },
    }),
  };
  // Each picker sets the filter its dictionary lists: an account fact as an author filter.
  for (const name of EXPLORE_PICKERS) {
    if (form[name].length === 0) continue;
    const { field, counted } = TAXONOMIES[name];
    const scope = counted === 'accounts' ? author : filters;
    scope[field.name] = field.type === 'ids' ? { contains_any: form[name] } : { in: form[name] };
  }
  const post = {
    ...(form.q.trim() && { query: form.q.trim() }),
    ...(Object.keys(filters).length > 0 && { filters }),
    ...(Object.keys(author).length > 0 && { author: { filters: author } }),
  };
  return Object.keys(post).length > 0 ? post : null;
}

/**
 * The insight pages: Explore (a search's volume over time, broken down, its first posts with
 * their evidence, and "save as alert") and an account's page (profile, followers and its newest
 * posts' views over time, lookalikes). They validate with the API's own schemas and call its
 * services as the holder, so what they draw is what the API answers.
 */
export function registerInsightPages(
  app: FastifyInstance,
  deps: {
    services: InsightServices;
    alerts?: AlertService | undefined;
    base: string;
    /** `PUBLIC_BASE_URL`, for the suggestions' problem types. */
    baseUrl: string;
    context: PageContextOf;
    signedIn: preHandlerAsyncHookHandler;
    signedInForm: RouteShorthandOptions;
    /** The holder's budgets: a page that searches spends a search, a suggestion a read. */
    budgets: { search: RouteRateLimit; read: RouteRateLimit };
  },
): void {
  const { services, base } = deps;
  const owner = (request: FastifyRequest) => request.holder!.email;
  let options: { at: number; value: Promise<PickerOptions> } | null = null;

  /** The pickers' entries: each dictionary's IDs, labels and counts, most carried first. */
  function pickerOptions(): Promise<PickerOptions> {
    if (options && Date.now() - options.at < OPTIONS_TTL_MS) return options.value;
    const value = Promise.all(
      EXPLORE_PICKERS.map(async (name) => [name, await services.taxonomies.list(name)] as const),
    ).then(
      // Object.fromEntries answers a string-keyed record: its keys are exactly EXPLORE_PICKERS.
      (lists) => Object.fromEntries(lists) as PickerOptions,
    );
    options = { at: Date.now(), value };
    value.catch(() => (options = null));
    return value;
  }

  const searching = { preValidation: deps.budgets.search.count, preHandler: deps.signedIn };
  app.get('/explore', searching, async (request, reply) => {
    const form = exploreQuery.parse(request.query ?? {});
    const [choices, endpoints] = await Promise.all([
      pickerOptions(),
      deps.alerts ? deps.alerts.listEndpoints(owner(request)) : [],
    ]);
    const state: ExploreState = { form, options: choices, breakdowns: Object.keys(BREAKDOWN_FIELDS), endpoints };
    try {
      const post = exploreScope(form);
      if (post) {
        const search = parsePostSearchRequest({ post, limit: FIRST_POSTS, include: ['matches'] });
        const parsed = postCountsRequestSchema.safeParse({
          post,
          interval: form.interval,
          time_zone: form.tz,
          ...(form.by && { breakdown: { by: form.by } }),
        });
        if (!parsed.success) throw new ValidationFailedError(formatIssues(parsed.error.issues));
        const [page, counts] = await deps.budgets.search.run(request, reply, () =>
          Promise.all([services.postSearch.search(search), services.postCounts.counts(parsed.data)]),
        );
        Object.assign(state, {
          post,
          posts: page.data,
          matches: page.matches ?? [],
          counts,
          ...(page.suggested_query !== undefined && { suggestedQuery: page.suggested_query }),
          ...(page.corrected_query !== undefined && { correctedQuery: page.corrected_query }),
        });
      }
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      reply.headers(error.headers());
      return sendPage(
        reply,
        explorePage(deps.context(request, reply), { ...state, error: error.detail }),
        error.status,
      );
    }
    return sendPage(reply, explorePage(deps.context(request, reply), state));
  });

  app.post('/explore/save', deps.signedInForm, async (request, reply) => {
    const form = parseForm(saveForm, request.body);
    if (!deps.alerts) return reply.callNotFound();
    let post: unknown;
    try {
      post = JSON.parse(form.post);
    } catch {
      throw new ValidationFailedError('The search to save is not valid: run it again from Explore.');
    }
    const body = { name: form.name, post, webhook_endpoint_id: form.webhook_endpoint_id, ...volumeOf(form) };
    const parsed = createSavedSearchSchema.safeParse(body);
    if (!parsed.success) throw new ValidationFailedError(formatIssues(parsed.error.issues));
    const saved = await deps.alerts.createSearch(owner(request), parsed.data);
    return reply.redirect(
      `${base}/alerts?notice=${encodeURIComponent(`Saved search “${saved.name}” created: new matches go to its endpoint.`)}`,
      303,
    );
  });

  registerSuggestRoute(app, { suggest: services.suggest, baseUrl: deps.baseUrl, budget: deps.budgets.read });

  // "Go to account" without the script: the handle as typed, one leading `@` optional.
  app.get('/accounts', { preHandler: deps.signedIn }, async (request, reply) => {
    const { handle } = gotoQuery.parse(request.query ?? {});
    const name = handle.trim().replace(/^@/, '');
    return reply.redirect(name ? `${base}/accounts/@${encodeURIComponent(name)}` : `${base}/explore`, 303);
  });

  app.get('/accounts/:handle', searching, async (request, reply) => {
    const { handle } = z.object({ handle: z.string().min(1).max(200) }).parse(request.params);
    const { account, followers, views, lookalikes } = await deps.budgets.search.run(request, reply, async () => {
      const account = await services.accounts.get(handle);
      const [followers, views, lookalikes] = await Promise.all([
        followerSeries(services, account),
        viewSeries(services, account),
        similarAccountsOf(services, account),
      ]);
      return { account, followers, views, lookalikes };
    });
    return sendPage(reply, accountPage(deps.context(request, reply), { account, followers, views, lookalikes }));
  });
}

async function followerSeries(services: InsightServices, account: Account): Promise<LineSeries[]> {
  const history = await services.accounts.history(account.id, { interval: 'day' });
  const points = history.points.flatMap((p) =>
    p.followers_count === undefined ? [] : [{ at: Date.parse(p.at), value: p.followers_count }],
  );
  return [{ name: 'followers', points }];
}

/** The views of the account's newest posts, one line each (their post histories, by day). */
async function viewSeries(services: InsightServices, account: Account): Promise<LineSeries[]> {
  const newest = await services.postSearch.search(
    parsePostSearchRequest({ post: { author: { filters: { id: { eq: account.id } } } }, limit: NEWEST_POSTS }),
  );
  return Promise.all(
    newest.data.map(async (post) => {
      const history = await services.posts.history(post.id, { interval: 'day' });
      const points = history.points.flatMap((p) =>
        p.views === undefined ? [] : [{ at: Date.parse(p.at), value: p.views }],
      );
      return { name: `${post.posted_at.slice(0, 10)} ${post.caption.slice(0, 24)}…`, points };
    }),
  );
}

async function similarAccountsOf(
  services: InsightServices,
  account: Account,
): Promise<Account[] | { unavailable: string }> {
  try {
    const page = await services.accountSearch.search(
      parseAccountSearchRequest({ account: { similar_to: account.id }, limit: 6 }),
    );
    return page.data;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { unavailable: `Lookalikes are not available for this account now: ${error.detail}` };
  }
}
