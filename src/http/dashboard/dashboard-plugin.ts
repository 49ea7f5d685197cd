import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import session from '@fastify/session';
import type { FastifyPluginAsync, Session } from 'fastify';
import { z } from 'zod';
import type { AlertService } from '../../services/alerts/alert-service.ts';
import { DomainError, ValidationFailedError } from '../../internal/errors.ts';
import type { HolderKeys } from '../../services/keys/holder-keys.ts';
import type { HolderService } from '../../services/keys/holder-service.ts';
import type { SessionStore } from '../../services/keys/session-store.ts';
import { sendPage, type PageContextOf } from './page.ts';
import { errorPage } from './views.ts';
import { dashboardRoutes } from './dashboard-routes.ts';
import type { InsightServices } from './insight-pages.ts';
import { fieldOf, isKeyOf } from '../../internal/typed-objects.ts';
import type { RateLimitOptions } from '../plugins/rate-limit.ts';

declare module 'fastify' {
  interface Session {
    /** The signed-in holder's email. */
    holder?: string;
  }
}

/** What the dashboard needs: services, and how to keep sessions. */
export interface DashboardDeps {
  holders: Pick<HolderService, 'signUp' | 'signIn' | 'signUpMode'>;
  keys: HolderKeys;
  sessions: SessionStore<Session>;
  /** Signs the session cookie (at least 32 characters). */
  sessionSecret: string;
  sessionIdleMs: number;
  /** `PUBLIC_BASE_URL`: its scheme decides `Secure` cookies, its path prefixes links. */
  baseUrl: string;
  /** Where the stylesheet and scripts (`ASSETS`) are. */
  assetsDir: string;
  /** The alerts page's service; absent: no alerts page. */
  alerts?: AlertService;
  /** The Explore and account pages' services; absent: no such pages. */
  insights?: InsightServices;
  /** The API's per-minute budgets, which each holder's Explore and account pages spend too. */
  rateLimit?: RateLimitOptions;
}

const ASSETS = {
  'dashboard.css': 'text/css; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'typeahead.js': 'text/javascript; charset=utf-8',
} as const;

/**
 * The account holders' dashboard under `/dashboard`: server-rendered HTML that works without
 * JavaScript. Everything it registers (form parsing, cookies, sessions, CSRF, security headers)
 * stays inside this plugin's context, so the JSON API is untouched.
 */
export const dashboardPlugin: FastifyPluginAsync<DashboardDeps> = async (app, deps) => {
  const url = new URL(deps.baseUrl);
  const base = `${url.pathname.replace(/\/+$/, '')}/dashboard`;
  const assets = Object.fromEntries(
    Object.keys(ASSETS).map((name) => [name, readFileSync(join(deps.assetsDir, name))]),
  );
  const assetVersion = createHash('sha256').update(Object.values(assets).join('')).digest('hex').slice(0, 10);

  // Pages, not API operations: kept out of the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...(route.schema ?? {}), hide: true };
  });
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await app.register(cookie);
  await app.register(session, {
    secret: deps.sessionSecret,
    cookieName: 'social_search_session',
    store: deps.sessions,
    saveUninitialized: false,
    rolling: true,
    cookie: {
      httpOnly: true,
      sameSite: 'lax',
      secure: url.protocol === 'https:',
      path: base,
      maxAge: deps.sessionIdleMs,
    },
  });
  await app.register(csrf, {
    sessionPlugin: '@fastify/session',
    // The dashboard's forms are urlencoded objects (formbody), so `_csrf` is a field or absent.
    getToken: (request) => (request.body as { _csrf?: string } | undefined)?._csrf,
  });
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    // The dashboard opens nothing cross-origin; HSTS belongs to the TLS terminator, and only on https.
    strictTransportSecurity: url.protocol === 'https:',
    referrerPolicy: { policy: 'same-origin' },
    frameguard: { action: 'deny' },
  });

  const context: PageContextOf = (request, reply) => ({
    holder: request.session.holder ?? null,
    csrf: reply.generateCsrf(),
    base,
    assetVersion,
  });

  app.setErrorHandler(async (error, request, reply) => {
    const code = fieldOf(error, 'code');
    if (typeof code === 'string' && code.startsWith('FST_CSRF')) {
      return sendPage(
        reply,
        errorPage(
          context(request, reply),
          403,
          'This form has expired or did not come from this dashboard. Go back, reload the page and try again.',
        ),
        403,
      );
    }
    // A form, query or path that does not fit its schema is the visitor's to fix (a 422 naming the
    // field), whichever route parsed it: never a 500.
    if (error instanceof z.ZodError) {
      const issue = error.issues[0];
      error = new ValidationFailedError(`${issue?.path.join('.') || 'form'}: ${issue?.message ?? 'invalid'}`);
    }
    const status = error instanceof DomainError ? error.status : 500;
    if (status >= 500) request.log.error({ err: error }, 'dashboard request failed');
    const message = error instanceof DomainError ? error.detail : 'Something unexpected failed. Try again in a moment.';
    // Without Redis there is no session to read; render without one.
    const ctx = request.session ? context(request, reply) : { holder: null, csrf: '', base, assetVersion };
    if (error instanceof DomainError)
      for (const [name, value] of Object.entries(error.headers())) reply.header(name, value);
    return sendPage(reply, errorPage(ctx, status, message), status);
  });

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const name = request.params.name;
    if (!isKeyOf(ASSETS, name)) return reply.callNotFound();
    return (
      reply
        .type(ASSETS[name])
        // Versioned by content (the `v` query): cache for a year.
        .header('cache-control', 'public, max-age=31536000, immutable')
        .send(assets[name])
    );
  });

  await app.register(dashboardRoutes, {
    holders: deps.holders,
    keys: deps.keys,
    alerts: deps.alerts,
    insights: deps.insights,
    rateLimit: deps.rateLimit,
    base,
    baseUrl: deps.baseUrl,
    context,
  });
};
