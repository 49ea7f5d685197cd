import type { Client } from '@elastic/elasticsearch';
import { engineCall } from '../errors.ts';
import { firstString } from '../response-values.ts';

/** A record's companion document as written: its key, and its place in its shard's history. */
export interface StoredCompanion {
  key: string | undefined;
  seqNo: number | undefined;
  primaryTerm: number | undefined;
  /** The first value of each of the companion's {@link Companion.storedFields} it holds. */
  fields: Record<string, string>;
}

/**
 * A document kept in another index beside each record's own, derived from it (a post's vector
 * document: documents/vector-projection.ts), and written only when its key changes.
 */
export interface Companion<R> {
  /** The companion index's write alias (it is read through it too: one index behind it). */
  index: string;
  /** The stored field holding a companion document's key. */
  keyField: string;
  /** Whether `record` can have a companion document, or had one (its stored one is read only then). */
  applies(record: R): boolean;
  /** More stored fields read with the key (what {@link adopt} reads). */
  storedFields?: readonly string[];
  /**
   * The record as its stored companion describes it, where the companion was written without the
   * record (a post's vectors: its record learns their model and text at its next write); the same
   * object when there is nothing to take. Applied to every record a merge or a read hands on.
   */
  adopt?(record: R, stored: StoredCompanion): R;
  /**
   * Whether a record read back may be behind its companion: a read then looks the companion up
   * and {@link adopt}s it (absent: a read never does).
   */
  behind?(record: R): boolean;
  /**
   * Whether the record itself need not be written when a merge with `companionOnly` changed it:
   * what changed is all in its companion (a post's new vectors).
   */
  apart?(record: R): boolean;
  /**
   * A record's companion document and its key, from the record's own document; null: it has none.
   * Not `complete` when the record in hand lacks part of what the document holds (a post read back
   * keeps its vectors in its vector document only): {@link restore} then adds it from the stored one.
   */
  of(doc: Record<string, unknown>, record: R): { doc: Record<string, unknown>; key: string; complete: boolean } | null;
  /**
   * The record's own document once its stored companion holds what it derives from the record
   * (their keys agree): a post's without its vectors, which are then stored once, in its vector
   * document. Until then the record keeps what it has, so that a companion refused or lost (a
   * process that died between the two writes) can be written again from the record.
   */
  settle?(doc: Record<string, unknown>, record: R): void;
  /**
   * Completes documents `of` left incomplete from the stored companions, each as of the version
   * read (`seqNo`, `primaryTerm`); answers the IDs it completed (the rest are retried next round).
   */
  restore?(
    pending: ReadonlyArray<{ id: string; doc: Record<string, unknown>; seqNo: number; primaryTerm: number }>,
  ): Promise<Set<string>>;
}

/** A companion document's write as planned: its bulk action, and its document (null: a delete). */
export interface CompanionWrite {
  id: string;
  action: object;
  doc: Record<string, unknown> | null;
  complete: boolean;
  stored: StoredCompanion | undefined;
}

/**
 * The companion side of a record store's merge (record-store.ts): the stored companions' keys, the
 * writes a record's new state needs, and completing those the record in hand cannot fill.
 */
export function createCompanions<R>(client: Client, companion: Companion<R>) {
  /** The stored companions' keys and versions of `ids` (absent: not there). */
  async function fetchStored(ids: readonly string[]): Promise<Map<string, StoredCompanion>> {
    const out = new Map<string, StoredCompanion>();
    if (ids.length === 0) return out;
    const response = await engineCall(() =>
      client.mget({
        index: companion.index,
        ids: [...ids],
        realtime: true,
        _source: false,
        stored_fields: [companion.keyField, ...(companion.storedFields ?? [])],
      }),
    );
    for (const doc of response.docs) {
      if (!('found' in doc) || !doc.found) continue;
      const fields: Record<string, string> = {};
      for (const name of companion.storedFields ?? []) {
        const value = firstString(doc, name);
        if (value !== undefined) fields[name] = value;
      }
      out.set(doc._id, {
        key: firstString(doc, companion.keyField),
        seqNo: doc._seq_no,
        primaryTerm: doc._primary_term,
        fields,
      });
    }
    return out;
  }

  /** `record` with what its stored companion says and it lacks (see {@link Companion.adopt}). */
  function adopt(record: R, stored: StoredCompanion | undefined): R {
    return stored && companion.adopt ? companion.adopt(record, stored) : record;
  }

  /**
   * Has each read record that may be behind its companion (Companion.behind) take what the stored
   * one says; each of those entries keeps the companion looked up (null: none there).
   */
  async function adoptBehind(read: Map<string, { record: R | null; companion?: StoredCompanion | null }>) {
    if (!companion.behind) return;
    const ids = [...read].filter(([, f]) => f.record !== null && companion.behind!(f.record)).map(([id]) => id);
    const stored = await fetchStored(ids);
    for (const id of ids) {
      const f = read.get(id)!;
      f.companion = stored.get(id) ?? null;
      f.record = adopt(f.record!, f.companion ?? undefined);
    }
  }

  /** A companion write `record` needs (its key differs from the stored one), or null. */
  function plan(
    id: string,
    doc: Record<string, unknown>,
    record: R,
    stored: StoredCompanion | undefined,
  ): CompanionWrite | null {
    const next = companion.of(doc, record);
    if (next === null) {
      // It had one and has none now: its companion goes.
      if (!stored) return null;
      const action = {
        delete: { _index: companion.index, _id: id, if_seq_no: stored.seqNo, if_primary_term: stored.primaryTerm },
      };
      return { id, action, doc: null, complete: true, stored };
    }
    if (next.key === stored?.key) {
      companion.settle?.(doc, record);
      return null;
    }
    const action = stored
      ? { index: { _index: companion.index, _id: id, if_seq_no: stored.seqNo, if_primary_term: stored.primaryTerm } }
      : { create: { _index: companion.index, _id: id } };
    return { id, action, doc: next.doc, complete: next.complete, stored };
  }

  /**
   * Completes the incomplete companion writes from their stored documents; answers the IDs of
   * those it could not because the stored one moved meanwhile (they are checked again next round,
   * as a lost race is). One with no stored document has nothing to restore from: it is not
   * written (its record's next embedding writes it).
   */
  async function restore(writes: Iterable<CompanionWrite>): Promise<{ behind: Set<string>; skipped: Set<string> }> {
    const incomplete = [...writes].filter((w) => !w.complete && w.doc !== null);
    const skipped = new Set(incomplete.filter((w) => w.stored?.seqNo === undefined).map((w) => w.id));
    const pending = incomplete.flatMap((w) =>
      w.stored?.seqNo !== undefined && w.stored.primaryTerm !== undefined
        ? [{ id: w.id, doc: w.doc!, seqNo: w.stored.seqNo, primaryTerm: w.stored.primaryTerm }]
        : [],
    );
    const restored = pending.length > 0 && companion.restore ? await companion.restore(pending) : new Set();
    return { behind: new Set(pending.filter((p) => !restored.has(p.id)).map((p) => p.id)), skipped };
  }

  return { companion, fetchStored, adopt, adoptBehind, plan, restore };
}
