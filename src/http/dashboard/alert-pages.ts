import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preHandlerAsyncHookHandler,
  RouteShorthandOptions,
} from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../internal/errors.ts';
import type { AlertService } from '../../services/alerts/alert-service.ts';
import { alertsPage, type AlertsPageState } from './alert-views.ts';
import { endpointForm, parseForm } from './forms.ts';
import { sendPage, type PageContextOf } from './page.ts';

const idParams = z.object({ id: z.string().max(100) });

/** Deliveries shown per endpoint. */
const RECENT_DELIVERIES = 10;

/**
 * The dashboard's alerts page: the holder's webhook endpoints (add one and see its secret once,
 * their status, failures and recent deliveries, send a test event, re-enable, delete) and saved
 * searches (list, delete). Each action calls the API's own alert service as the holder; what it
 * refuses (a form field too long, a cap, the test events' limit) shows on the page with its
 * status, never as a 500.
 */
export function registerAlertPages(
  app: FastifyInstance,
  deps: {
    alerts: AlertService;
    base: string;
    context: PageContextOf;
    signedIn: preHandlerAsyncHookHandler;
    /** Route options of a signed-in form: CSRF checked, then the holder. */
    signedInForm: RouteShorthandOptions;
  },
): void {
  const { alerts, base } = deps;
  const owner = (request: FastifyRequest) => request.holder!.email;

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    extra: Omit<AlertsPageState, 'endpoints' | 'deliveries' | 'searches'> = {},
    status = 200,
  ) {
    const [endpoints, searches] = await Promise.all([
      alerts.endpointStates(owner(request)),
      alerts.listSearches(owner(request)),
    ]);
    const deliveries = new Map(
      await Promise.all(
        endpoints.map(async (e) => [e.id, await alerts.deliveries(owner(request), e.id, RECENT_DELIVERIES)] as const),
      ),
    );
    return sendPage(
      reply,
      alertsPage(deps.context(request, reply), { endpoints, deliveries, searches, ...extra }),
      status,
    );
  }

  /** Runs a form's action; a refusal (a 4xx) is rendered on the page. */
  async function act(request: FastifyRequest, reply: FastifyReply, action: () => Promise<FastifyReply>) {
    try {
      return await action();
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      return render(request, reply, { error: error.detail }, error.status);
    }
  }

  const form = deps.signedInForm;
  const back = (reply: FastifyReply, notice: string) =>
    reply.redirect(`${base}/alerts?notice=${encodeURIComponent(notice)}`, 303);

  app.get<{ Querystring: { notice?: string } }>('/alerts', { preHandler: deps.signedIn }, async (request, reply) => {
    const notice = request.query.notice?.slice(0, 200);
    return render(request, reply, notice ? { notice } : {});
  });

  app.post('/alerts/endpoints', form, (request, reply) =>
    act(request, reply, async () => {
      const input = parseForm(endpointForm, request.body);
      const created = await alerts.createEndpoint(owner(request), {
        url: input.url,
        description: input.description || null,
      });
      return render(request, reply, { created: { id: created.id, url: created.url, secret: created.secret } }, 201);
    }),
  );

  app.post('/alerts/endpoints/:id/test', form, (request, reply) =>
    act(request, reply, async () => {
      const event = await alerts.sendTestEvent(owner(request), idParams.parse(request.params).id);
      return back(reply, `Test event ${event.id} queued: it shows under recent deliveries within seconds.`);
    }),
  );

  app.post('/alerts/endpoints/:id/enable', form, (request, reply) =>
    act(request, reply, async () => {
      await alerts.enableEndpoint(owner(request), idParams.parse(request.params).id);
      return back(reply, 'Endpoint enabled: deliveries resume.');
    }),
  );

  app.post('/alerts/endpoints/:id/delete', form, (request, reply) =>
    act(request, reply, async () => {
      await alerts.deleteEndpoint(owner(request), idParams.parse(request.params).id);
      return back(reply, 'Endpoint deleted.');
    }),
  );

  app.post('/alerts/searches/:id/delete', form, (request, reply) =>
    act(request, reply, async () => {
      await alerts.deleteSearch(owner(request), idParams.parse(request.params).id);
      return back(reply, 'Saved search deleted.');
    }),
  );
}
