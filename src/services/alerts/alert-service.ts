import { randomBytes } from 'node:crypto';
import type { AlertEvent, SavedSearch, WebhookEndpoint } from '../../contract/alerts.ts';
import { base32, CROCKFORD_LOWER } from '../../internal/base32.ts';
import {
  LimitReachedError,
  RateLimitExceededError,
  ResourceNotFoundError,
  ValidationFailedError,
} from '../../internal/errors.ts';
import type { SavedSearchInput } from '../../query/alert-request.ts';
import { encodeVector } from '../../text/vector-codec.ts';
import type { DeliveryStore } from './delivery-store.ts';
import { HEALTHY, type EndpointRecord, type EndpointStore } from './endpoint-store.ts';
import type { EventStore } from './event-store.ts';
import type { SavedSearchRecord, SearchStore } from './search-store.ts';
import { generateWebhookSecret, type SecretBox } from './secret-box.ts';
import { liveWindowStarts } from './volume.ts';
import type { VolumeStore } from './volume-store.ts';
import { checkNewWebhookUrl, RefusedWebhookAddress } from './webhook-address.ts';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Secrets signing at once at most: the current one and two retired within the last 24 h. */
export const SIGNING_SECRETS_MAX = 3;
/** Test events one endpoint may be sent per minute. */
export const TEST_EVENTS_PER_MINUTE = 5;

/** A new resource id: `prefix` and 26 Crockford base32 characters (128 random bits). */
function newId(prefix: string): string {
  return `${prefix}_${base32(randomBytes(16), CROCKFORD_LOWER)}`;
}

const endpointView = ({
  id,
  url,
  description,
  status,
  created_at,
  disabled_reason,
}: EndpointRecord): WebhookEndpoint => ({
  id,
  url,
  description,
  status,
  created_at,
  disabled_reason,
});

const searchView = ({ owner: _owner, vector: _vector, ...view }: SavedSearchRecord): SavedSearch => view;

/** A pull cursor: the stream position, opaque. */
const encodeCursor = (position: string) => Buffer.from(position, 'utf8').toString('base64url');

/**
 * A pull cursor's position: `ms-seq` as this list wrote it, never later than now (no event can sit
 * there) nor past what a stream position holds; anything else is not a cursor of this list (422).
 */
function decodeCursor(cursor: string, now: number): string {
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  const [ms, seq] = /^(\d{1,16})-(\d{1,16})$/.exec(position)?.slice(1).map(Number) ?? [];
  if (ms === undefined || seq === undefined || ms > now + 60_000 || !Number.isSafeInteger(seq))
    throw new ValidationFailedError('query parameter /cursor: not a cursor of this list');
  return `${ms}-${seq}`;
}

/**
 * The alert resources of the API: webhook endpoints and saved searches, each owned by the holder of
 * the key that created it and visible to every key of that holder and nobody else (another
 * holder's id answers 404, exactly like an unknown one). A request refused (a cap, a limit, a bad
 * address) changes nothing.
 */
export function createAlertService(deps: {
  endpoints: EndpointStore;
  searches: SearchStore;
  events: Pick<EventStore, 'page' | 'keysOf'>;
  volume: Pick<VolumeStore, 'keysOf'>;
  deliveries: Pick<DeliveryStore, 'queueTest' | 'keysOf'>;
  box: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** SAVED_SEARCHES_PER_HOLDER and WEBHOOK_ENDPOINTS_PER_HOLDER. */
  caps: { searches: number; endpoints: number };
  /** The query embedding, when the service ranks with vectors and the model is ready (else null: the worker embeds it). */
  embedQuery: (text: string) => Promise<ArrayLike<number> | null>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  const { endpoints, searches } = deps;

  async function ownedEndpoint(owner: string, id: string): Promise<EndpointRecord> {
    const record = await endpoints.get(id);
    if (!record || record.owner !== owner) throw new ResourceNotFoundError(`no webhook endpoint ${id}`);
    return record;
  }

  async function ownedSearch(owner: string, id: string): Promise<SavedSearchRecord> {
    const record = await searches.get(id);
    if (!record || record.owner !== owner) throw new ResourceNotFoundError(`no saved search ${id}`);
    return record;
  }

  async function checkedUrl(raw: string): Promise<URL> {
    try {
      return await checkNewWebhookUrl(raw, deps.allowPrivate);
    } catch (error) {
      if (error instanceof RefusedWebhookAddress) throw new ValidationFailedError(`/url: ${error.message}`);
      throw error;
    }
  }

  const capReached = (what: string, cap: number) =>
    new LimitReachedError(`a holder may have at most ${cap} ${what}; delete one first`);

  return {
    async createEndpoint(owner: string, input: { url: string; description?: string | null | undefined }) {
      const url = await checkedUrl(input.url);
      const secret = generateWebhookSecret();
      const record: EndpointRecord = {
        id: newId('whe'),
        owner,
        url: url.href,
        description: input.description ?? null,
        status: 'enabled',
        disabled_reason: null,
        secret: deps.box.seal(secret),
        previous_secrets: [],
        created_at: now().toISOString(),
        failing_since: null,
        failed_turns: 0,
        last_error: null,
      };
      // Checked as it is written: concurrent creates cannot pass the cap together.
      if (!(await endpoints.insert(record, deps.caps.endpoints)))
        throw capReached('webhook endpoints', deps.caps.endpoints);
      const { id, description, status, created_at } = record;
      return { id, url: record.url, description, status, secret, created_at, disabled_reason: null };
    },

    listEndpoints: async (owner: string) => (await endpoints.listOf(owner)).map(endpointView),
    getEndpoint: async (owner: string, id: string) => endpointView(await ownedEndpoint(owner, id)),
    /** An endpoint as the holder's dashboard shows it: with its failure, if it is failing. */
    endpointStates: async (owner: string) =>
      (await endpoints.listOf(owner)).map((e) => ({
        ...endpointView(e),
        failing_since: e.failing_since,
        last_error: e.last_error,
      })),

    async deleteEndpoint(owner: string, id: string) {
      await endpoints.delete(await ownedEndpoint(owner, id), deps.deliveries.keysOf(id));
    },

    /**
     * A new secret; the ones before it keep signing for 24 h each, so a receiver still verifying
     * with any of them keeps working. At most {@link SIGNING_SECRETS_MAX} sign at once: one more
     * rotation is refused (409) until the oldest retires.
     */
    async rotateSecret(owner: string, id: string) {
      const record = await ownedEndpoint(owner, id);
      const at = now().getTime();
      const live = record.previous_secrets.filter((p) => Date.parse(p.until) > at);
      if (live.length + 1 >= SIGNING_SECRETS_MAX)
        throw new LimitReachedError(
          `${SIGNING_SECRETS_MAX} secrets sign this endpoint's deliveries already; the oldest retires at ${live[0]!.until}, rotate again after it`,
        );
      const secret = generateWebhookSecret();
      const until = new Date(at + ROTATION_OVERLAP_MS).toISOString();
      await endpoints.update(id, {
        secret: deps.box.seal(secret),
        previous_secrets: [...live, { secret: record.secret, until }],
      });
      return { id, secret, previous_secret_expires_at: until };
    },

    /** Re-enables a disabled endpoint (its failure run starts afresh). */
    async enableEndpoint(owner: string, id: string) {
      await ownedEndpoint(owner, id);
      await endpoints.update(id, { status: 'enabled', disabled_reason: null, ...HEALTHY });
      return endpointView((await endpoints.get(id))!);
    },

    /** Queues a `webhook.test` event to the endpoint, at most {@link TEST_EVENTS_PER_MINUTE} a minute; returns it. */
    async sendTestEvent(owner: string, id: string): Promise<AlertEvent> {
      const endpoint = await ownedEndpoint(owner, id);
      const event: AlertEvent = {
        id: newId('evt'),
        type: 'webhook.test',
        created_at: now().toISOString(),
        data: { webhook_endpoint_id: endpoint.id },
      };
      const queued = await deps.deliveries.queueTest(
        owner,
        endpoint.id,
        { id: event.id, body: JSON.stringify(event) },
        TEST_EVENTS_PER_MINUTE,
      );
      if (!queued)
        throw new RateLimitExceededError(
          `an endpoint may be sent ${TEST_EVENTS_PER_MINUTE} test events a minute; retry within a minute`,
          60,
        );
      return event;
    },

    async deliveries(owner: string, id: string, limit: number) {
      await ownedEndpoint(owner, id);
      return endpoints.deliveries(id, limit);
    },

    async createSearch(owner: string, input: SavedSearchInput) {
      if (input.webhookEndpointId !== null) {
        const endpoint = await endpoints.get(input.webhookEndpointId);
        if (!endpoint || endpoint.owner !== owner)
          throw new ValidationFailedError(`/webhook_endpoint_id: no webhook endpoint ${input.webhookEndpointId}`);
      }
      // The cap before the embedding: a holder at the cap costs no model time.
      if ((await searches.countOf(owner)) >= deps.caps.searches) throw capReached('saved searches', deps.caps.searches);
      const vector = input.search.query === null ? null : await deps.embedQuery(input.search.query).catch(() => null);
      const record: SavedSearchRecord = {
        id: newId('srch'),
        owner,
        name: input.name,
        post: input.post,
        vector: vector ? encodeVector(Float32Array.from(vector)) : null,
        webhook_endpoint_id: input.webhookEndpointId,
        created_at: now().toISOString(),
        last_match_at: null,
        events_dropped: 0,
        events: input.events,
        volume: input.volume,
      };
      // Checked again as it is written: concurrent creates cannot pass the cap together.
      if (!(await searches.insert(record, deps.caps.searches))) throw capReached('saved searches', deps.caps.searches);
      return searchView(record);
    },

    listSearches: async (owner: string) => (await searches.listOf(owner)).map(searchView),
    getSearch: async (owner: string, id: string) => searchView(await ownedSearch(owner, id)),

    async deleteSearch(owner: string, id: string) {
      const search = await ownedSearch(owner, id);
      const windows = search.volume ? deps.volume.keysOf(id, liveWindowStarts(search.volume, now().getTime())) : [];
      await searches.delete(search, [...deps.events.keysOf(id), ...windows]);
    },

    /** A page of a saved search's events, oldest first, after `cursor`. */
    async matches(owner: string, id: string, page: { cursor: string | undefined; limit: number }) {
      const after = page.cursor ? decodeCursor(page.cursor, now().getTime()) : null;
      await ownedSearch(owner, id);
      const { events, next, more } = await deps.events.page(id, after, page.limit);
      return {
        // Written by this service alone, from an AlertEvent (event-store.ts), and served as stored.
        data: events.map((e) => JSON.parse(e.body) as AlertEvent),
        has_more: more,
        next_cursor: encodeCursor(next ?? '0-0'),
      };
    },
  };
}

/** The alert service. */
export type AlertService = ReturnType<typeof createAlertService>;
