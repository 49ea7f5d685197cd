import type { Client } from '@elastic/elasticsearch';
import type { AccountRecord, PostRecord } from '../../../domain/records.ts';
import { withStoredVectors } from '../queries/post-vectors.ts';
import type { IndexAdmin, IndexName, StoredIndexName } from '../../index-admin.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { projectAccount, projectPost, storedPostRecord } from '../documents/projection.ts';
import { projectPostVectors } from '../documents/vector-projection.ts';
import { refreshAll } from '../errors.ts';
import { concreteIndexName, type IndexNames } from '../names.ts';
import { aliasTargets, copyRecords, type CopyOutcome, type ProjectedWrite } from './index-inspection.ts';
import { adminCall as engineCall } from './templates.ts';

/** `indices rebuild`: a logical index and its companions copied into new indices, behind one alias swap. */

/** What `rebuild` takes and answers (IndexAdmin). */
export type RebuildOptions = NonNullable<Parameters<IndexAdmin['rebuild']>[1]>;
export type RebuildResult = Awaited<ReturnType<IndexAdmin['rebuild']>>;

/** One index a rebuild builds anew: the logical one (first) or one of its companions. */
export interface RebuildMember {
  name: StoredIndexName;
  names: IndexNames;
  /** The version of the template the new index is built from (in its name). */
  version: number;
}

/** A member with the indices it moves from and the one it moves to. */
interface Move extends RebuildMember {
  from: string[];
  to: string;
}

/**
 * Builds `members` (the logical index `name` first, then its companions) anew from the records of
 * `name`'s live index in one pass, checks each new index holds what was written into it, and swaps
 * every member's read and write aliases in one atomic update, so readers never see a new posts
 * index beside an old vector index. A failed or cancelled rebuild deletes every new index and leaves
 * the aliases as they were.
 */
export async function rebuildMembers(
  deps: { client: Client; refreshInterval: string; visibility: VisibilityEpoch },
  name: IndexName,
  members: readonly RebuildMember[],
  options: RebuildOptions,
): Promise<RebuildResult> {
  const { client } = deps;
  const moves: Move[] = [];
  for (const member of members)
    moves.push({
      ...member,
      from: await aliasTargets(client, member.names.read),
      to: concreteIndexName(member.names, member.version),
    });
  const main = moves[0]!;
  const created: string[] = [];
  let copied: number;
  try {
    for (const move of moves) {
      await engineCall(() =>
        client.indices.create({ index: move.to, settings: { refresh_interval: '-1' }, wait_for_active_shards: 1 }),
      );
      created.push(move.to);
    }
    // A point in time sees only refreshed segments: without this refresh, the writes of the
    // last jobs before the pause (up to one refresh interval) would not be copied, and would
    // be lost with the old index.
    await refreshAll(client, main.names.read);
    const outcome = await copyInto(client, name, moves, options);
    copied = outcome.records;
    for (const move of moves) {
      const expected = move === main ? outcome.records : (outcome.written.get(move.to) ?? 0);
      await finishIndex(client, move.to, expected, deps.refreshInterval);
    }
    // Cancellable up to the swap, not after: then the new indices are the live ones.
    options.signal?.throwIfAborted();
    // One atomic alias update: readers switch from the old indices to the new ones with no gap.
    await engineCall(() => client.indices.updateAliases({ actions: moves.flatMap(aliasActions) }));
  } catch (error) {
    // Nothing of a failed or cancelled copy stays behind; readers never saw it (the alias
    // swap is atomic: if it failed, nothing points at the new indices).
    if (created.length > 0) await client.indices.delete({ index: created }).catch(() => undefined);
    throw error;
  }
  await deps.visibility.advance();
  const old = moves.flatMap((move) => move.from);
  if (!options.keepOld && old.length > 0) await engineCall(() => client.indices.delete({ index: old }));
  return { from: main.from, to: main.to, copied };
}

/** Copies the records of `name`'s live index into the new indices of `moves`, projected anew. */
function copyInto(client: Client, name: IndexName, moves: Move[], options: RebuildOptions): Promise<CopyOutcome> {
  const to = new Map(moves.map((move) => [move.name, move.to]));
  const copy = {
    from: moves[0]!.names.read,
    ...(options.transform ? { transform: options.transform } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
  if (name === 'accounts')
    return copyRecords<AccountRecord>(client, {
      ...copy,
      project: (record) => [{ index: to.get('accounts')!, doc: projectAccount(record) }],
    });
  // A post's stored record keeps its vectors in its vector document: they come along from there.
  const vectorsFrom = moves.find((move) => move.name === 'post-vectors')?.names.read;
  return copyRecords<PostRecord>(client, {
    ...copy,
    ...(vectorsFrom ? { prepare: (records: PostRecord[]) => withStoredVectors(client, vectorsFrom, records) } : {}),
    project: (record) => {
      // The vector document is written in the same pass (and counted before the swap): the
      // post's record is stored without the vectors it holds.
      const post = { ...projectPost(record), record: storedPostRecord(record) };
      const writes: ProjectedWrite[] = [{ index: to.get('posts')!, doc: post }];
      // A post without a vector yet has no vector document.
      const vectors = projectPostVectors(post, record);
      if (vectors?.complete) writes.push({ index: to.get('post-vectors')!, doc: vectors.doc });
      return writes;
    },
  });
}

/** Gives a filled index its refresh interval back, and checks it holds the `expected` documents. */
async function finishIndex(client: Client, index: string, expected: number, refreshInterval: string): Promise<void> {
  await engineCall(() => client.indices.putSettings({ index, settings: { refresh_interval: refreshInterval } }));
  await engineCall(() => client.indices.refresh({ index }));
  const counted = (await engineCall(() => client.count({ index }))).count;
  if (counted !== expected)
    throw new Error(`copy into ${index} has ${counted} documents, expected ${expected}; aliases left unchanged`);
}

/** The alias actions that move a member's read and write aliases from its old indices to its new one. */
function aliasActions(move: Move) {
  return [
    ...move.from.flatMap((index) => [
      { remove: { index, alias: move.names.read } },
      { remove: { index, alias: move.names.write } },
    ]),
    { add: { index: move.to, alias: move.names.read } },
    { add: { index: move.to, alias: move.names.write, is_write_index: true } },
  ];
}
