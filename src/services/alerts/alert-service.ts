import { randomBytes } from 'node:crypto';
import type { AlertEvent, SavedSearch, WebhookEndpoint } from '../../contract/alerts.ts';
import { base32, CROCKFORD_LOWER } from '../../internal/base32.ts';
import { LimitReachedError, ResourceNotFoundError, ValidationFailedError } from '../../internal/errors.ts';
import type { SavedSearchInput } from '../../query/alert-request.ts';
import type { AlertStore, EndpointRecord, SavedSearchRecord } from './alert-store.ts';
import { encodeQueryVector } from './query-vector.ts';
import { generateWebhookSecret, type SecretBox } from './secret-box.ts';
import { checkWebhookUrl, RefusedWebhookAddress } from './webhook-address.ts';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new resource id: `prefix` and 26 Crockford base32 characters (128 random bits). */
function newId(prefix: string): string {
  return `${prefix}_${base32(randomBytes(16), CROCKFORD_LOWER)}`;
}

function endpointView(record: EndpointRecord): WebhookEndpoint {
  return {
    id: record.id,
    url: record.url,
    description: record.description,
    status: record.status,
    created_at: record.created_at,
    disabled_reason: record.disabled_reason,
  };
}

function searchView(record: SavedSearchRecord): SavedSearch {
  return {
    id: record.id,
    name: record.name,
    post: record.post as Record<string, unknown>,
    webhook_endpoint_id: record.webhook_endpoint_id,
    created_at: record.created_at,
    last_match_at: record.last_match_at,
  };
}

/** A pull cursor: the stream position, opaque. */
const encodeCursor = (position: string) => Buffer.from(position, 'utf8').toString('base64url');
function decodeCursor(cursor: string): string {
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d+-\d+$/.test(position))
    throw new ValidationFailedError('query parameter /cursor: not a cursor of this list');
  return position;
}

/**
 * The alert resources of the API: webhook endpoints and saved searches, each owned by the holder of
 * the key that created it and visible to every key of that holder and nobody else (another
 * holder's id answers 404, exactly like an unknown one).
 */
export function createAlertService(deps: {
  store: Omit<AlertStore, 'claimPending' | 'settlePending' | 'recordPending'>;
  box: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** SAVED_SEARCHES_PER_HOLDER and WEBHOOK_ENDPOINTS_PER_HOLDER. */
  caps: { searches: number; endpoints: number };
  /** The query embedding, when the service ranks with vectors and the model is ready (else null: the worker embeds it). */
  embedQuery: (text: string) => Promise<ArrayLike<number> | null>;
  /** Queues one delivery (a test event). */
  enqueueDelivery: (delivery: { endpoint_id: string; event_id: string; body: string }) => Promise<void>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  const { store } = deps;

  async function ownedEndpoint(owner: string, id: string): Promise<EndpointRecord> {
    const record = await store.endpoint(id);
    if (!record || record.owner !== owner) throw new ResourceNotFoundError(`no webhook endpoint ${id}`);
    return record;
  }

  async function ownedSearch(owner: string, id: string): Promise<SavedSearchRecord> {
    const record = await store.search(id);
    if (!record || record.owner !== owner) throw new ResourceNotFoundError(`no saved search ${id}`);
    return record;
  }

  return {
    async createEndpoint(owner: string, input: { url: string; description?: string | null | undefined }) {
      let url: URL;
      try {
        // The shape and a literal address only: a name is resolved and checked on every delivery
        // attempt (its answer may change), never here.
        url = checkWebhookUrl(input.url, deps.allowPrivate);
      } catch (error) {
        if (error instanceof RefusedWebhookAddress) throw new ValidationFailedError(`/url: ${error.message}`);
        throw error;
      }
      if ((await store.endpointsOf(owner)).length >= deps.caps.endpoints)
        throw new LimitReachedError(
          `a holder may have at most ${deps.caps.endpoints} webhook endpoints; delete one first`,
        );
      const secret = generateWebhookSecret();
      const record: EndpointRecord = {
        id: newId('whe'),
        owner,
        url: url.href,
        description: input.description ?? null,
        status: 'enabled',
        disabled_reason: null,
        secret: deps.box.seal(secret),
        previous_secret: null,
        previous_secret_until: null,
        created_at: now().toISOString(),
        failing_since: null,
      };
      await store.insertEndpoint(record);
      const view = endpointView(record);
      return {
        id: view.id,
        url: view.url,
        description: view.description,
        status: view.status,
        secret,
        created_at: view.created_at,
        disabled_reason: null,
      };
    },

    listEndpoints: async (owner: string) => (await store.endpointsOf(owner)).map(endpointView),
    getEndpoint: async (owner: string, id: string) => endpointView(await ownedEndpoint(owner, id)),

    async deleteEndpoint(owner: string, id: string) {
      await store.deleteEndpoint(await ownedEndpoint(owner, id));
    },

    async rotateSecret(owner: string, id: string) {
      const record = await ownedEndpoint(owner, id);
      const secret = generateWebhookSecret();
      const until = new Date(now().getTime() + ROTATION_OVERLAP_MS).toISOString();
      await store.updateEndpoint(id, {
        secret: deps.box.seal(secret),
        previous_secret: record.secret,
        previous_secret_until: until,
      });
      return { id, secret, previous_secret_expires_at: until };
    },

    /** Re-enables a disabled endpoint (its failure run starts afresh). */
    async enableEndpoint(owner: string, id: string) {
      await ownedEndpoint(owner, id);
      await store.updateEndpoint(id, { status: 'enabled', disabled_reason: null, failing_since: null });
      return endpointView((await store.endpoint(id))!);
    },

    /** Queues a `webhook.test` event to the endpoint; returns it. */
    async sendTestEvent(owner: string, id: string): Promise<AlertEvent> {
      const endpoint = await ownedEndpoint(owner, id);
      const event: AlertEvent = {
        id: newId('evt'),
        type: 'webhook.test',
        created_at: now().toISOString(),
        data: { webhook_endpoint_id: endpoint.id },
      };
      await deps.enqueueDelivery({ endpoint_id: endpoint.id, event_id: event.id, body: JSON.stringify(event) });
      return event;
    },

    async deliveries(owner: string, id: string, limit: number) {
      await ownedEndpoint(owner, id);
      return store.deliveries(id, limit);
    },

    async createSearch(owner: string, input: SavedSearchInput, post: unknown) {
      if (input.webhookEndpointId !== null) {
        const endpoint = await store.endpoint(input.webhookEndpointId);
        if (!endpoint || endpoint.owner !== owner)
          throw new ValidationFailedError(`/webhook_endpoint_id: no webhook endpoint ${input.webhookEndpointId}`);
      }
      const vector = input.search.query === null ? null : await deps.embedQuery(input.search.query).catch(() => null);
      const record: SavedSearchRecord = {
        id: newId('srch'),
        owner,
        name: input.name,
        post,
        search: JSON.stringify(input.search),
        vector: vector ? encodeQueryVector(vector) : null,
        webhook_endpoint_id: input.webhookEndpointId,
        created_at: now().toISOString(),
        last_match_at: null,
      };
      if (!(await store.insertSearch(record, deps.caps.searches)))
        throw new LimitReachedError(`a holder may have at most ${deps.caps.searches} saved searches; delete one first`);
      return searchView(record);
    },

    listSearches: async (owner: string) => (await store.searchesOf(owner)).map(searchView),
    getSearch: async (owner: string, id: string) => searchView(await ownedSearch(owner, id)),

    async deleteSearch(owner: string, id: string) {
      await store.deleteSearch(await ownedSearch(owner, id));
    },

    /** A page of a saved search's events, oldest first, after `cursor`. */
    async matches(owner: string, id: string, page: { cursor: string | undefined; limit: number }) {
      await ownedSearch(owner, id);
      const after = page.cursor ? decodeCursor(page.cursor) : null;
      const events = await store.events(id, after, page.limit + 1);
      const shown = events.slice(0, page.limit);
      const last = shown.at(-1)?.position ?? after ?? '0-0';
      return {
        data: shown.map((e) => JSON.parse(e.body) as AlertEvent),
        has_more: events.length > page.limit,
        next_cursor: encodeCursor(last),
      };
    },
  };
}

/** The alert service. */
export type AlertService = ReturnType<typeof createAlertService>;
