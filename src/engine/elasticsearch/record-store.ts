import type { Client } from '@elastic/elasticsearch';
import { setTimeout as sleep } from 'node:timers/promises';
import { InternalError } from '../../internal/errors.ts';
import { sameRecord } from '../../domain/merge.ts';
import type { MergeOutcome, RecordStore, RecordUpdate } from '../records.ts';
import { engineCall, indicesNotInstalled } from './errors.ts';

const MAX_ATTEMPTS = 50;

interface Fetched<R> {
  record: R | null;
  seqNo?: number;
  primaryTerm?: number;
}

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
}): RecordStore<R> {
  const { client, index, project } = deps;

  async function fetch(ids: readonly string[]): Promise<Map<string, Fetched<R>>> {
    const out = new Map<string, Fetched<R>>();
    if (ids.length === 0) return out;
    const response = await engineCall(() =>
      client.mget<{ record: R }>({ index, ids: [...ids], realtime: true }),
    );
    for (const doc of response.docs) {
      if ('found' in doc && doc.found && doc._source) {
        out.set(doc._id, { record: doc._source.record, seqNo: doc._seq_no, primaryTerm: doc._primary_term });
      } else {
        out.set(doc._id, { record: null });
      }
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

    async merge(ids: readonly string[], update: RecordUpdate<R>): Promise<MergeOutcome<R>> {
      const outcome: MergeOutcome<R> = new Map();
      let pending = [...new Set(ids)];
      for (let attempt = 1; pending.length > 0; attempt++) {
        if (attempt > MAX_ATTEMPTS) {
          throw new InternalError(`gave up merging ${pending.length} records after ${MAX_ATTEMPTS} conflicts`);
        }
        const fetched = await fetch(pending);
        const operations: unknown[] = [];
        const planned: Array<{ id: string; before: R | null; after: R }> = [];
        for (const id of pending) {
          const current = fetched.get(id) ?? { record: null };
          const next = update(id, current.record);
          if (next === null || (current.record !== null && sameRecord(current.record, next))) continue;
          operations.push(
            current.record === null
              ? { create: { _index: index, _id: id } }
              : { index: { _index: index, _id: id, if_seq_no: current.seqNo, if_primary_term: current.primaryTerm } },
            project(next),
          );
          planned.push({ id, before: current.record, after: next });
        }
        if (operations.length === 0) break;
        // require_alias: a write that reaches Elasticsearch before `indices apply` must fail, not
        // auto-create a concrete index named like the write alias (which would then block apply).
        const response = await engineCall(() => client.bulk({ operations, refresh: false, require_alias: true }));
        const conflicts: string[] = [];
        response.items.forEach((item, i) => {
          const result = item.index ?? item.create;
          const plan = planned[i]!;
          if (result?.status === 409) conflicts.push(plan.id);
          else if (result?.error?.type === 'index_not_found_exception') throw indicesNotInstalled();
          else if (result?.error) {
            throw new InternalError(`indexing ${plan.id} failed: ${result.error.type}: ${result.error.reason ?? ''}`);
          } else outcome.set(plan.id, { before: plan.before, after: plan.after });
        });
        pending = conflicts;
        // Jittered back-off so that writers racing on the same record interleave instead of colliding again.
        if (pending.length > 0) await sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
      }
      return outcome;
    },
  };
}
