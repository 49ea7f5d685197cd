import type { AccountRecord, PostRecord } from '../domain/records.ts';

/** Records found by one lookup: by ID, and by alias (as the caller passed it). */
export interface Looked<R> {
  byId: Map<string, R>;
  byAlias: Map<string, R>;
}

/**
 * Records named by lists of IDs and aliases, all resolved in one engine request (lookup by list:
 * a CRM's thousand handles are one request, not a thousand). Each alias resolves as the GETs
 * resolve it: to the record that most recently claimed it. Records are returned as stored,
 * whatever their status; servability is the caller's rule. Near real time (the index's refresh),
 * where a get by ID reads in real time.
 */
export interface RecordLookups {
  /** Accounts by service ID and by handle (without `@`; case-insensitive). */
  accounts(ids: readonly string[], handles: readonly string[]): Promise<Looked<AccountRecord>>;
  /** Posts by service ID and by shortcode (case-sensitive). */
  posts(ids: readonly string[], shortcodes: readonly string[]): Promise<Looked<PostRecord>>;
}
