import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AuthenticationRequiredError, InsufficientScopeError, ValidationFailedError } from '../../internal/errors.ts';
import { generateKey, hashSecret, isKeyId, KEY_LENGTH, KEY_PREFIX, parseKey } from './key-format.ts';
import { holderEmailSchema } from './holder-email.ts';
import { KEY_SCOPES, type KeyLimits, type KeyRecord, type KeyScope, type KeyStore } from './key-store.ts';

/** The identity a request acts as once its key is verified. */
export interface AuthenticatedKey {
  id: string;
  owner: string;
  name: string;
  scopes: KeyScope[];
  /** The key's own rate limits (`null`: the service's default). */
  limits: KeyLimits;
}

/** Input of {@link KeyService.create}; validated, so callers may pass raw CLI values. */
export interface CreateKeyInput {
  owner: string;
  name: string;
  /** Defaults to `['search']`. */
  scopes?: readonly string[];
}

/** A new key: the only value that ever carries the secret in clear. */
export interface CreatedKey {
  id: string;
  key: string;
  owner: string;
  name: string;
  scopes: KeyScope[];
  created_at: string;
}

/** A key as listed: never the secret, never its hash. */
export interface KeySummary {
  id: string;
  owner: string;
  name: string;
  scopes: KeyScope[];
  created_at: string;
  revoked_at: string | null;
  status: 'active' | 'revoked';
  limits: KeyLimits;
}

/** Key lifecycle and request authentication. */
export interface KeyService {
  create(input: CreateKeyInput): Promise<CreatedKey>;
  list(filter?: { owner?: string }): Promise<KeySummary[]>;
  /** Revokes a key by id (`key_…`); `false` when no such key exists. */
  revoke(id: string): Promise<boolean>;
  /**
   * Sets a key's own rate limits (requests per minute; `null` restores the default). Every API
   * node applies them from its next request. `false` when no such key exists.
   */
  setLimits(id: string, limits: Partial<KeyLimits>): Promise<boolean>;
  /** Verifies an `Authorization` header value; throws {@link AuthenticationRequiredError}. */
  authenticate(authorizationHeader: string | undefined): Promise<AuthenticatedKey>;
  /** Throws {@link InsufficientScopeError} unless `key` carries `scope`. */
  requireScope(key: AuthenticatedKey, scope: KeyScope): void;
}

/** Dependencies of {@link createKeyService}. */
export interface KeyServiceDeps {
  store: KeyStore;
  /** Makes sure the key's owner exists as an account holder (keys carry their holder). */
  holders?: { ensure(email: string): Promise<unknown> };
  /** Clock, injectable for tests. */
  now?: () => Date;
}

const ownerSchema = holderEmailSchema;

const limitSchema = z
  .number()
  .int('a limit must be a whole number')
  .min(0, 'a limit must be 0 or more')
  .max(1_000_000, 'a limit must be at most 1000000')
  .nullable();
const limitsSchema = z.strictObject({ search: limitSchema.optional(), read: limitSchema.optional() });

const createSchema = z.object({
  owner: ownerSchema,
  name: z.string().trim().min(1, 'name must not be empty').max(100, 'name must be at most 100 characters'),
  scopes: z
    .array(z.enum(KEY_SCOPES, { error: `scopes must be among: ${KEY_SCOPES.join(', ')}` }))
    .min(1, 'scopes must not be empty')
    .default(['search'])
    .transform((scopes) => KEY_SCOPES.filter((s) => scopes.includes(s))),
});

// Details are fixed strings: none may echo the header, since it may hold a valid secret.
const DETAIL = {
  missing: 'No API key was sent. Send the header `Authorization: Bearer <API_KEY>`.',
  noBearer: 'The Authorization header must start with `Bearer ` (the word Bearer, one space, then the key).',
  bareKey: 'The key was sent without the `Bearer ` prefix. Send `Authorization: Bearer <API_KEY>`.',
  noSpace: 'Put exactly one space between `Bearer` and the key: `Authorization: Bearer <API_KEY>`.',
  noKey: 'The Authorization header has the `Bearer` prefix but no key after it.',
  quoted: 'The key is wrapped in quotes. Send it bare: `Authorization: Bearer <API_KEY>`, without quotes.',
  whitespace:
    'The key has surrounding whitespace (extra spaces, a tab or a line break). Send exactly one space after `Bearer` and nothing after the key.',
  quotedAndWhitespace:
    'The key is wrapped in quotes and has surrounding whitespace. Send `Authorization: Bearer <API_KEY>` with one space after `Bearer`, no quotes and nothing after the key.',
  malformed: `The API key is malformed: a key is \`${KEY_PREFIX}\` followed by ${KEY_LENGTH - KEY_PREFIX.length} characters (${KEY_LENGTH} in all). Copy it again in full.`,
  inactive: 'The API key is not active (unknown or revoked). Create a new key or ask its owner.',
} as const;

const QUOTES = new Set(['"', "'", '`', '\u2018', '\u2019', '\u201c', '\u201d']);

/**
 * Extracts the key from an `Authorization` value, diagnosing failures in the order of spec 5
 * rule 4: prefix, then quotes and whitespace. Format and activity are checked by the caller.
 */
function extractCredential(header: string | undefined): string {
  if (header === undefined || header === '') throw new AuthenticationRequiredError(DETAIL.missing);

  // RFC 7235: the scheme name is case-insensitive.
  const scheme = header.slice(0, 6);
  if (scheme.toLowerCase() !== 'bearer') {
    const unwrapped = stripQuotes(header.trim());
    throw new AuthenticationRequiredError(unwrapped.startsWith(KEY_PREFIX) ? DETAIL.bareKey : DETAIL.noBearer);
  }
  const rest = header.slice(6);
  if (rest.trim() === '') throw new AuthenticationRequiredError(DETAIL.noKey);
  if (!/^\s/.test(rest)) throw new AuthenticationRequiredError(DETAIL.noSpace);

  // Exactly one space is the separator; anything else around the key is padding.
  const credential = rest.startsWith(' ') ? rest.slice(1) : rest;
  const padded = rest[0] !== ' ' || credential !== credential.trim();
  const quoted = stripQuotes(credential.trim()) !== credential.trim();
  if (quoted && padded) throw new AuthenticationRequiredError(DETAIL.quotedAndWhitespace);
  if (quoted) throw new AuthenticationRequiredError(DETAIL.quoted);
  if (padded) throw new AuthenticationRequiredError(DETAIL.whitespace);
  return credential;
}

function stripQuotes(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && QUOTES.has(value[start] ?? '')) start++;
  while (end > start && QUOTES.has(value[end - 1] ?? '')) end--;
  return value.slice(start, end);
}

function hashesMatch(storedHex: string, presentedHex: string): boolean {
  const stored = Buffer.from(storedHex, 'hex');
  const presented = Buffer.from(presentedHex, 'hex');
  // A corrupt stored hash must fail closed, and timingSafeEqual throws on unequal lengths.
  if (stored.length !== 32 || presented.length !== stored.length) return false;
  return timingSafeEqual(stored, presented);
}

function summarize(record: KeyRecord): KeySummary {
  return {
    id: record.id,
    owner: record.owner,
    name: record.name,
    scopes: record.scopes,
    created_at: record.created_at,
    revoked_at: record.revoked_at,
    status: record.revoked_at ? 'revoked' : 'active',
    limits: record.limits,
  };
}

/** Throws {@link InsufficientScopeError} unless `key` carries `scope`. */
export function requireScope(key: AuthenticatedKey, scope: KeyScope): void {
  if (!key.scopes.includes(scope)) {
    throw new InsufficientScopeError(`this key lacks the \`${scope}\` scope`);
  }
}

/**
 * Creates the key service.
 *
 * `authenticate` asks the store on every call; the API's store caches active keys and drops
 * revoked ones as the revocation is published (key-cache.ts), so a revocation still takes effect
 * on the next request on every node.
 */
export function createKeyService({ store, holders, now = () => new Date() }: KeyServiceDeps): KeyService {
  return {
    async create(input) {
      const parsed = createSchema.safeParse(input);
      if (!parsed.success) {
        // Shared schemas say "must be …"; name the field they are about.
        const message = (i: z.core.$ZodIssue) =>
          i.message.startsWith('must') ? `${i.path.join('.')} ${i.message}` : i.message;
        throw new ValidationFailedError(parsed.error.issues.map(message).join('; '));
      }
      const { owner, name, scopes } = parsed.data;
      await holders?.ensure(owner);
      const generated = generateKey();
      const created_at = now().toISOString();
      await store.insert({
        id: generated.id,
        secret_hash: generated.secretHash,
        owner,
        name,
        scopes,
        created_at,
        revoked_at: null,
        limits: { search: null, read: null },
      });
      return { id: generated.id, key: generated.key, owner, name, scopes, created_at };
    },

    async list(filter = {}) {
      let owner: string | undefined;
      if (filter.owner !== undefined) {
        const parsed = ownerSchema.safeParse(filter.owner);
        if (!parsed.success) throw new ValidationFailedError('owner must be an email address');
        owner = parsed.data;
      }
      const records = await store.list(owner === undefined ? {} : { owner });
      return records.map(summarize);
    },

    async revoke(id) {
      if (!isKeyId(id)) return false;
      return store.revoke(id, now().toISOString());
    },

    async setLimits(id, limits) {
      const parsed = limitsSchema.safeParse(limits);
      if (!parsed.success) throw new ValidationFailedError(parsed.error.issues.map((i) => i.message).join('; '));
      if (!isKeyId(id)) return false;
      // Object.fromEntries of the parsed limits, absent ones dropped: a partial KeyLimits.
      const given = Object.fromEntries(
        Object.entries(parsed.data).filter(([, v]) => v !== undefined),
      ) as Partial<KeyLimits>;
      return store.setLimits(id, given);
    },

    async authenticate(authorizationHeader) {
      const credential = extractCredential(authorizationHeader);
      const parsed = parseKey(credential);
      if (!parsed) throw new AuthenticationRequiredError(DETAIL.malformed);

      const record = await store.get(parsed.id);
      // Hash even for unknown ids so both paths cost about the same.
      const presented = hashSecret(parsed.secret);
      if (!record || !hashesMatch(record.secret_hash, presented) || record.revoked_at) {
        throw new AuthenticationRequiredError(DETAIL.inactive);
      }
      return { id: record.id, owner: record.owner, name: record.name, scopes: record.scopes, limits: record.limits };
    },

    requireScope,
  };
}
