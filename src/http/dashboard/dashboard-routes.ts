import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  preHandlerAsyncHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import { DomainError } from '../../internal/errors.ts';
import type { HolderKeys } from '../../services/keys/holder-keys.ts';
import { SignInThrottledError, type Holder, type HolderService } from '../../services/keys/holder-service.ts';
import { sendPage, type PageContextOf } from './page.ts';
import { createKeyForm, keyIdParams, parseForm, signInForm, signUpForm, usageQuery } from './forms.ts';
import { keysPage, signInPage, signUpPage, usagePage } from './views.ts';
import type { AlertService } from '../../services/alerts/alert-service.ts';
import { registerAlertPages } from './alert-pages.ts';
import { registerInsightPages, type InsightServices } from './insight-pages.ts';
import { registerRateLimit, UNLIMITED, type RateLimitOptions, type RouteRateLimit } from '../plugins/rate-limit.ts';

/** Options of {@link dashboardRoutes}. */
export interface DashboardRoutesOptions {
  holders: Pick<HolderService, 'signUp' | 'signIn' | 'signUpMode'>;
  keys: HolderKeys;
  /** Webhook endpoints and saved searches (the alerts page); absent: no such page. */
  alerts?: AlertService | undefined;
  /** The Explore and account pages' services; absent: no such pages. */
  insights?: InsightServices | undefined;
  /** The API's per-minute budgets; each holder's insight pages spend their own. */
  rateLimit?: RateLimitOptions | undefined;
  /** The dashboard's path as links see it. */
  base: string;
  /** `PUBLIC_BASE_URL`: where problem types live (the JSON routes' problems). */
  baseUrl: string;
  context: PageContextOf;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in holder, on pages that require one. */
    holder?: Holder;
  }
}

/** A domain error a form shows next to its fields; anything else goes to the error page. */
function formError(error: unknown): DomainError {
  if (error instanceof DomainError && error.status < 500) return error;
  throw error;
}

/**
 * A signed-in holder's budgets on the pages that search (Explore, accounts) and suggest: the API's
 * per-minute defaults, counted per holder, so a holder scripting the dashboard's search box slows
 * nobody else. Not signed in: not counted (those requests go to the sign-in page).
 */
async function holderBudgets(
  app: FastifyInstance,
  rateLimit: RateLimitOptions | undefined,
): Promise<{ search: RouteRateLimit; read: RouteRateLimit }> {
  if (!rateLimit) return { search: UNLIMITED, read: UNLIMITED };
  const holder = {
    of: (request: FastifyRequest) => (request.session.holder ? `holder:${request.session.holder}` : undefined),
    name: 'this account',
  };
  return {
    search: await registerRateLimit(app, rateLimit, 'search', holder),
    read: await registerRateLimit(app, rateLimit, 'read', holder),
  };
}

/**
 * The dashboard's pages. Thin like the API's routes: parse the form, call one service, render.
 * Every POST is CSRF-checked (the plugin's `csrfProtection`), and signing in or up starts a new
 * session (no fixation).
 */
export const dashboardRoutes: FastifyPluginAsync<DashboardRoutesOptions> = async (
  app,
  { holders, keys, alerts, insights, rateLimit, base, baseUrl, context },
) => {
  const csrf: preHandlerHookHandler = (request, reply, done) => app.csrfProtection(request, reply, done);
  const csrfChecked = { onRequest: undefined, preHandler: csrf };
  const signedIn: preHandlerAsyncHookHandler = async (request, reply) => {
    const email = request.session.holder;
    if (!email) return reply.redirect(`${base}/sign-in`, 303);
    request.holder = { email };
  };
  const signedInForm = { preHandler: [csrf, signedIn] };

  async function startSession(request: FastifyRequest, reply: FastifyReply, holder: Holder) {
    await request.session.regenerate();
    request.session.holder = holder.email;
    return reply.redirect(`${base}/keys`, 303);
  }

  app.get('/', async (request, reply) => reply.redirect(`${base}/${request.session.holder ? 'keys' : 'sign-in'}`, 303));

  app.get<{ Querystring: { signed_out?: string } }>('/sign-in', async (request, reply) => {
    const notice = request.query.signed_out !== undefined ? 'You are signed out.' : undefined;
    return sendPage(reply, signInPage(context(request, reply), notice ? { notice } : {}));
  });

  app.post('/sign-in', csrfChecked, async (request, reply) => {
    const form = signInForm.parse(request.body ?? {});
    try {
      const holder = await holders.signIn({ email: form.email, password: form.password, address: request.ip });
      return await startSession(request, reply, holder);
    } catch (error) {
      const refusal = formError(error);
      if (refusal instanceof SignInThrottledError) reply.header('retry-after', String(refusal.retryAfterSeconds));
      return sendPage(
        reply,
        signInPage(context(request, reply), { email: form.email, error: refusal.detail }),
        refusal.status,
      );
    }
  });

  app.get<{ Querystring: { invitation?: string } }>('/sign-up', async (request, reply) => {
    const invitation = request.query.invitation?.slice(0, 200);
    return sendPage(
      reply,
      signUpPage(context(request, reply), { mode: holders.signUpMode, ...(invitation ? { invitation } : {}) }),
    );
  });

  app.post('/sign-up', csrfChecked, async (request, reply) => {
    const form = signUpForm.parse(request.body ?? {});
    try {
      const holder = await holders.signUp({ email: form.email, password: form.password, invitation: form.invitation });
      return await startSession(request, reply, holder);
    } catch (error) {
      const refusal = formError(error);
      const state = { mode: holders.signUpMode, email: form.email, invitation: form.invitation, error: refusal.detail };
      return sendPage(reply, signUpPage(context(request, reply), state), refusal.status);
    }
  });

  app.post('/sign-out', csrfChecked, async (request, reply) => {
    await request.session.destroy();
    return reply.redirect(`${base}/sign-in?signed_out`, 303);
  });

  app.get<{ Querystring: { revoked?: string } }>('/keys', { preHandler: signedIn }, async (request, reply) => {
    const revoked = request.query.revoked;
    const list = await keys.list(request.holder!);
    const notice = revoked
      ? `Key ${list.find((k) => k.id === revoked)?.name ?? revoked} is revoked: requests with it are refused.`
      : undefined;
    return sendPage(reply, keysPage(context(request, reply), { keys: list, ...(notice ? { notice } : {}) }));
  });

  app.post('/keys', signedInForm, async (request, reply) => {
    try {
      const form = parseForm(createKeyForm, request.body);
      const created = await keys.create(request.holder!, { name: form.name, scopes: form.scopes });
      return sendPage(
        reply,
        keysPage(context(request, reply), { keys: await keys.list(request.holder!), created }),
        201,
      );
    } catch (error) {
      const refusal = formError(error);
      return sendPage(
        reply,
        keysPage(context(request, reply), { keys: await keys.list(request.holder!), error: refusal.detail }),
        refusal.status,
      );
    }
  });

  app.post('/keys/:id/revoke', signedInForm, async (request, reply) => {
    const { id } = keyIdParams.parse(request.params);
    await keys.revoke(request.holder!, id);
    return reply.redirect(`${base}/keys?revoked=${encodeURIComponent(id)}`, 303);
  });

  if (alerts) registerAlertPages(app, { alerts, base, context, signedIn, signedInForm });
  if (insights)
    registerInsightPages(app, {
      services: insights,
      alerts,
      base,
      baseUrl,
      context,
      signedIn,
      signedInForm,
      budgets: await holderBudgets(app, rateLimit),
    });

  app.get('/usage', { preHandler: signedIn }, async (request, reply) => {
    const { days } = usageQuery.parse(request.query ?? {});
    return sendPage(
      reply,
      usagePage(context(request, reply), { usage: await keys.usage(request.holder!, days), days }),
    );
  });
};
