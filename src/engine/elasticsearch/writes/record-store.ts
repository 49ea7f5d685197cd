import type { Client, estypes } from '@elastic/elasticsearch';
import { setTimeout as sleep } from 'node:timers/promises';
import { InternalError, ServiceUnavailableError } from '../../../internal/errors.ts';
import { eachInFlight } from '../../../internal/in-flight.ts';
import { sameRecord } from '../../../domain/merge.ts';
import type { MetricPoint } from '../../../domain/history.ts';
import { paced, type WritePacing } from '../../../internal/write-pacing.ts';
import type { MergeOutcome, RecordStore, RecordUpdate, Versioned } from '../../records.ts';
import { createBulkBodies, type BulkChunk, type BulkLimits } from '../documents/bulk-bodies.ts';
import { createCompanions, type Companion, type CompanionWrite, type StoredCompanion } from './companions.ts';
import { engineCall, indicesNotInstalled, isTransientEngineError, translateEngineError } from '../errors.ts';

const MAX_ATTEMPTS = 50;
/** Bulk request bounds: Elasticsearch's guidance is a few MB per request. */
const BULK_LIMITS: BulkLimits = { maxDocs: 500, maxBytes: 5 * 1024 * 1024 };
/** Bulk requests of one merge in flight at once (worker concurrency multiplies it). */
const BULK_IN_FLIGHT = 2;
/** Item or request statuses that mean "overloaded or away, try again": never a lost write. */
const TRANSIENT = new Set([429, 502, 503, 504]);
/** Rounds of back-off for transient failures (~25 s in all) before the job fails and BullMQ retries it. */
const MAX_TRANSIENT_RETRIES = 8;

interface Fetched<R> {
  record: R | null;
  seqNo?: number;
  primaryTerm?: number;
  /** Its stored companion, when the read looked it up (null: none there). */
  companion?: StoredCompanion | null;
}

/** One record's step in a merge round: as read, as updated, and whether that changed it. */
type Step<R> = { id: string; current: Fetched<R>; next: R | null; changed: boolean };

/**
 * A {@link RecordStore} over one index, read and written through its write alias.
 *
 * Merges are read–modify–write with optimistic concurrency: each record is read in real time with
 * its `_seq_no`/`_primary_term`, the update is applied in the service, and the bulk write carries
 * `if_seq_no`/`if_primary_term` (or `create` for a new record). A write that lost a race answers
 * 409 and is re-read and re-applied, so concurrent merges of the same record never lose a field.
 * (This engine has no Painless, so merges cannot run inside Elasticsearch.)
 */
export function createRecordStore<R extends { id: string }>(deps: {
  client: Client;
  index: string;
  project: (record: R) => Record<string, unknown>;
  /**
   * How long a bulk may wait inside Elasticsearch (for a primary to be assigned, a master to be
   * elected) before its items fail as unavailable (and are retried); absent: Elasticsearch's
   * minute. Shorter than the client's request timeout, so that a write the client gave up on
   * cannot land later: by then its work may have been redone from a newer state, and where the
   * redo had nothing to write (a baseline already right), the late write's stale value would stay.
   */
  waitMs?: number;
  /** Searches first: the pause after each bulk request while the engine's searches run slow (absent: none). */
  pacing?: WritePacing;
  /**
   * A document derived from each record, in an index of its own (absent: none). Each round reads
   * the stored companions' keys after the records (of those that can have one) and writes a
   * companion, in the same bulk request as its record and with its own optimistic concurrency,
   * when its key differs from the stored one. A record whose write or companion write failed is
   * checked again in the next round even if it is then unchanged, so a companion is not left
   * behind by a race or a refused item; only a process that dies between the two, with the
   * companion's item refused, leaves it behind until the record's next write or a rebuild.
   */
  companion?: Companion<R>;
  /** Where metric points go (absent: the history is off, and points passed to a merge are dropped). */
  points?: {
    write(point: MetricPoint): { action: object; doc: string };
    /** Resolves once points may be written (their template is installed). */
    ensureInstalled(): Promise<void>;
  };
}): RecordStore<R> {
  const { client, index, project } = deps;

  async function fetch(ids: readonly string[]): Promise<Map<string, Fetched<R>>> {
    const out = new Map<string, Fetched<R>>();
    if (ids.length === 0) return out;
    const response = await engineCall(() =>
      // The whole `_source`, which holds the record alone (the mapping stores nothing else). An
      // `_source_includes: ['record']` asks the same but makes the engine re-parse and copy every
      // document through its source filter: 45% of its get time in the intake bench's profile.
      client.mget<{ record: R }>({ index, ids: [...ids], realtime: true }),
    );
    for (const doc of response.docs) {
      if ('found' in doc && doc.found && doc._source) {
        out.set(doc._id, { record: doc._source.record, seqNo: doc._seq_no, primaryTerm: doc._primary_term });
      } else {
        out.set(doc._id, { record: null });
      }
    }
    await companions?.adoptBehind(out);
    return out;
  }

  const companions = deps.companion ? createCompanions(client, deps.companion) : null;

  async function versions(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const unique = [...new Set(ids)];
    if (unique.length === 0) return out;
    // No stored fields read or sent: the engine looks the ID up and reads its sequence number.
    const response = await engineCall(() => client.mget({ index, ids: unique, realtime: true, _source: false }));
    for (const doc of response.docs) {
      if ('found' in doc && doc.found) out.set(doc._id, versionToken(doc._primary_term, doc._seq_no));
    }
    return out;
  }

  return {
    async get(ids) {
      const fetched = await fetch([...new Set(ids)]);
      const out = new Map<string, R>();
      for (const [id, f] of fetched) if (f.record) out.set(id, f.record);
      return out;
    },

    async getVersioned(ids) {
      const fetched = await fetch([...new Set(ids)]);
      const out = new Map<string, Versioned<R>>();
      for (const [id, f] of fetched)
        if (f.record) out.set(id, { record: f.record, version: versionToken(f.primaryTerm, f.seqNo) });
      return out;
    },

    versions,

    async merge(
      ids: readonly string[],
      update: RecordUpdate<R>,
      extra: Parameters<RecordStore<R>['merge']>[2] = {},
    ): Promise<MergeOutcome<R>> {
      const outcome: MergeOutcome<R> = new Map();
      let pending = [...new Set(ids)];
      let points = deps.points ? [...(extra.points ?? [])] : [];
      if (points.length > 0) await deps.points!.ensureInstalled();
      let conflictRounds = 0;
      let transientRounds = 0;
      // Records whose companion is checked even when unchanged (see Companion): all of them when
      // asked (a retried job), then those whose write or companion lost a race or was refused.
      const recheck = new Set<string>(extra.recheck ? pending : []);
      while (pending.length > 0 || points.length > 0) {
        const fetched = await fetch(pending);
        const steps: Array<Step<R>> = [];
        for (const id of pending) {
          const current = fetched.get(id) ?? { record: null };
          const next = update(id, current.record);
          // The same object back means "unchanged" without serializing both to compare them.
          const changed = !(
            next === null ||
            next === current.record ||
            (current.record !== null && sameRecord(current.record, next))
          );
          steps.push({ id, current, next, changed });
        }
        const stored = companions ? await storedCompanions(steps, recheck) : new Map<string, StoredCompanion>();
        const bodies = createBulkBodies<Planned<R>>(BULK_LIMITS);
        const planned: Array<{ before: R | null; after: R }> = [];
        const writes: Array<{
          record?: { id: string; action: object; doc: Record<string, unknown>; before: R | null; after: R };
          companion?: CompanionWrite;
        }> = [];
        // Records written apart from their companions (`companionOnly`), with the version read.
        const apart = new Map<string, { current: Fetched<R>; after: R }>();
        // Records written with no companion stored yet, which a companion written meanwhile may be ahead of.
        const unseen: string[] = [];
        for (const { id, current, next, changed } of steps) {
          if (!changed || next === null) {
            if (companions && recheck.has(id) && current.record !== null) {
              const companionWrite = companions.plan(id, project(current.record), current.record, stored.get(id));
              if (companionWrite) writes.push({ companion: companionWrite });
            }
            continue;
          }
          const action =
            current.record === null
              ? { create: { _index: index, _id: id } }
              : { index: { _index: index, _id: id, if_seq_no: current.seqNo, if_primary_term: current.primaryTerm } };
          const doc = project(next);
          const companionWrite = companions ? companions.plan(id, doc, next, stored.get(id)) : null;
          if (extra.companionOnly && current.record !== null && companions?.companion.apart?.(next)) {
            // Its change is all in its companion: the record stays as it is, and its version is
            // checked once the companion is written (a write of the record meanwhile redoes it).
            if (companionWrite) {
              writes.push({ companion: companionWrite });
              apart.set(id, { current, after: next });
            }
            continue;
          }
          if (companions && current.record !== null && !stored.has(id) && companions.companion.behind?.(next))
            unseen.push(id);
          writes.push({
            record: { id, action, doc, before: current.record, after: next },
            ...(companionWrite && { companion: companionWrite }),
          });
          planned.push({ before: current.record, after: next });
        }
        // Companions whose record in hand lacks what they hold, from their stored documents.
        const unrestored = companions
          ? await companions.restore(writes.flatMap((w) => (w.companion ? [w.companion] : [])))
          : { behind: new Set<string>(), skipped: new Set<string>() };
        const companionsBehind = [...unrestored.behind];
        for (const { record, companion: companionWrite } of writes) {
          if (record)
            bodies.add(
              { id: record.id, before: record.before, after: record.after },
              record.action,
              JSON.stringify(record.doc),
            );
          if (!companionWrite) continue;
          if (unrestored.behind.has(companionWrite.id) || unrestored.skipped.has(companionWrite.id)) continue;
          bodies.add(
            { companion: companionWrite.id },
            companionWrite.action,
            companionWrite.doc === null ? null : JSON.stringify(companionWrite.doc),
          );
        }
        fetched.clear();
        recheck.clear();
        for (const point of points) {
          const { action, doc } = deps.points!.write(point);
          bodies.add({ point }, action, doc);
        }
        const chunks = bodies.finish();
        if (chunks.length === 0) break;
        if (planned.length > 0) await extra.beforeWrite?.(planned);
        const { written, conflicts, transient, transientPoints, companionConflicts, companionsTransient } =
          await writeAll(chunks);
        for (const w of written) outcome.set(w.id, { before: w.before, after: w.after });
        const failed = new Set([...companionConflicts, ...companionsTransient, ...companionsBehind]);
        const moved = await settleApart(apart, failed, outcome);
        // A companion written (from an older state of its record) between this round's read of the
        // companions and its write of the records: read after the write, so one side sees the other.
        const overtaken = companions
          ? await companions.fetchStored(unseen.filter((id) => outcome.has(id)))
          : new Map<string, StoredCompanion>();
        // A record that lost its race may have left its companion written from the state that lost.
        const behind = [...conflicts, ...transient, ...failed, ...moved, ...overtaken.keys()];
        for (const id of behind) recheck.add(id);
        pending = [...new Set(behind)];
        points = transientPoints;
        if (transient.length > 0 || transientPoints.length > 0 || companionsTransient.length > 0) {
          // Elasticsearch is overloaded or away: back off exponentially, with jitter so that
          // workers do not come back in step; past the bound the job fails and BullMQ retries it.
          if (++transientRounds > MAX_TRANSIENT_RETRIES) {
            throw new ServiceUnavailableError(
              `Elasticsearch kept refusing writes (${transient.length + transientPoints.length} records and points pending); the job will be retried`,
            );
          }
          await sleep(backoffMs(transientRounds));
        } else if (behind.length > 0) {
          if (++conflictRounds > MAX_ATTEMPTS)
            throw new InternalError(`gave up merging ${pending.length} records after ${MAX_ATTEMPTS} conflicts`);
          // Jittered back-off so that writers racing on the same record interleave instead of colliding again.
          await sleep(Math.random() * Math.min(200, 5 * 2 ** conflictRounds));
        }
      }
      return outcome;
    },
  };

  /**
   * The stored companions of the steps' records that can have one (not one created now: a companion
   * left over refuses the create, and the next round reads it; nor one the read looked up). What a
   * companion says and its record does not yet know, the record takes (Companion.adopt).
   */
  async function storedCompanions(
    steps: ReadonlyArray<Step<R>>,
    recheck: ReadonlySet<string>,
  ): Promise<Map<string, StoredCompanion>> {
    const stored = new Map<string, StoredCompanion>();
    const unread: string[] = [];
    for (const { id, current, next, changed } of steps) {
      const record = changed ? next : recheck.has(id) ? current.record : null;
      if (record === null || current.record === null || !companions!.companion.applies(record)) continue;
      if (current.companion === undefined) unread.push(id);
      else if (current.companion !== null) stored.set(id, current.companion);
    }
    for (const [id, held] of await companions!.fetchStored(unread)) stored.set(id, held);
    for (const step of steps) {
      const held = stored.get(step.id);
      if (step.changed && step.next !== null) step.next = companions!.adopt(step.next, held);
      else if (step.current.record !== null) step.current.record = companions!.adopt(step.current.record, held);
    }
    return stored;
  }

  /**
   * The records of a `companionOnly` merge whose companions were written: those still at the
   * version read join `outcome`; the IDs of those written since are answered (checked again).
   */
  async function settleApart(
    apart: ReadonlyMap<string, { current: Fetched<R>; after: R }>,
    failed: ReadonlySet<string>,
    outcome: MergeOutcome<R>,
  ): Promise<string[]> {
    const now = await versions([...apart.keys()].filter((id) => !failed.has(id)));
    const moved: string[] = [];
    for (const [id, { current, after }] of apart) {
      if (failed.has(id)) continue;
      if (now.get(id) === versionToken(current.primaryTerm, current.seqNo))
        outcome.set(id, { before: current.record, after });
      else moved.push(id);
    }
    return moved;
  }

  /** Sends bulk requests, a few in flight; sorts each item's fate. */
  async function writeAll(chunks: Array<BulkChunk<Planned<R>>>) {
    const written: PlannedWrite<R>[] = [];
    const conflicts: string[] = [];
    const transient: string[] = [];
    const transientPoints: MetricPoint[] = [];
    const companionConflicts: string[] = [];
    const companionsTransient: string[] = [];
    await eachInFlight(chunks, BULK_IN_FLIGHT, async ({ body, items: chunk }) => {
      let items: Array<{ status: number; error?: { type?: string; reason?: string | null } | undefined }>;
      try {
        // require_alias: a write that reaches Elasticsearch before `indices apply` must fail, not
        // auto-create a concrete index named like the write alias (which would then block apply).
        const response = await paced(deps.pacing, () =>
          client.bulk<string>({
            // A body the client sends as is (a Buffer: the transport serializes only what is not a
            // string, stream or Buffer); its type only knows arrays.
            operations: body as unknown as estypes.BulkRequest<string>['operations'],
            refresh: false,
            require_alias: true,
            // Each item's fate alone: the rest (index, ID, version, shard counts) is ~200 bytes an
            // item for the engine to write and the worker to parse, and nothing here reads it.
            filter_path: ['items.*.status', 'items.*.error'],
            ...(deps.waitMs ? { timeout: `${deps.waitMs}ms` } : {}),
          }),
        );
        items = response.items.map((item) => (item.index ?? item.create ?? item.delete)!);
      } catch (error) {
        if (!isTransientEngineError(error)) throw translateEngineError(error);
        items = chunk.map(() => ({ status: 503 }));
      }
      items.forEach((result, i) => {
        const plan = chunk[i]!;
        if ('companion' in plan) {
          // 409: written meanwhile from another state of the record; either way it is checked again.
          // 404: a companion deleted meanwhile, as this write would have.
          if (result.status === 404 && !result.error) return;
          if (result.status === 409) companionConflicts.push(plan.companion);
          else if (TRANSIENT.has(result.status)) companionsTransient.push(plan.companion);
          else if (result.error?.type === 'index_not_found_exception') throw indicesNotInstalled();
          else if (result.error)
            throw new InternalError(
              `indexing the companion of ${plan.companion} failed: ${result.error.type}: ${result.error.reason ?? ''}`,
            );
          return;
        }
        if ('point' in plan) {
          // 409: the point is there already (the same observation, sent again or retried).
          if (TRANSIENT.has(result.status)) transientPoints.push(plan.point);
          else if (result.error && result.status !== 409)
            throw new InternalError(
              `writing a metric point of ${plan.point.id} failed: ${result.error.type}: ${result.error.reason ?? ''}`,
            );
          return;
        }
        if (result.status === 409) conflicts.push(plan.id);
        else if (TRANSIENT.has(result.status)) transient.push(plan.id);
        else if (result.error?.type === 'index_not_found_exception') throw indicesNotInstalled();
        else if (result.error)
          throw new InternalError(`indexing ${plan.id} failed: ${result.error.type}: ${result.error.reason ?? ''}`);
        else written.push(plan);
      });
    });
    return { written, conflicts, transient, transientPoints, companionConflicts, companionsTransient };
  }
}

/** A write's place in its shard's history: equal tokens, same version of the record. */
function versionToken(primaryTerm: number | undefined, seqNo: number | undefined): string {
  return `${primaryTerm}:${seqNo}`;
}

/** One planned write, its document already in its request's body (bulk-bodies.ts). */
interface PlannedWrite<R> {
  id: string;
  before: R | null;
  after: R;
}

/** A record write, its companion's or a metric point, in a bulk request. */
type Planned<R> = PlannedWrite<R> | { companion: string } | { point: MetricPoint };

/** Exponential back-off with full jitter: 0.1 s, 0.2 s, … capped at 8 s, times a random factor in [0.5, 1.5). */
function backoffMs(round: number): number {
  return Math.min(8_000, 100 * 2 ** (round - 1)) * (0.5 + Math.random());
}
