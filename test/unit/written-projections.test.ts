import { describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation } from '../../src/contract/observations.ts';
import { applyPost } from '../../src/domain/merge.ts';
import { emptyPost, type PostRecord } from '../../src/domain/records.ts';
import { projectPost } from '../../src/engine/elasticsearch/documents/projection.ts';
import {
  createWrittenProjections,
  KEEP_WHILE_ASKED_MS,
} from '../../src/engine/elasticsearch/documents/written-projections.ts';
import { generateObservations } from '../../src/seed/generator.ts';

/** Demo posts as records (valid by construction). */
function records(count: number): PostRecord[] {
  return [...generateObservations({ posts: count, accounts: 2, seed: 5 })]
    .filter((o) => o['kind'] === 'post')
    .map((o) => {
      const parsed = parseObservation(o);
      if (!parsed.ok) throw new Error(parsed.detail);
      const platformId = o['platform_id'] as string;
      return applyPost(emptyPost(mintId('post', platformId), platformId), parsed.value as never);
    });
}

describe('the projections of written posts, for matching at the write', () => {
  it('hands matching the projection the write made while saved searches are matched, and keeps none otherwise', () => {
    let clock = 0;
    const projections = createWrittenProjections(() => clock);
    const [first, second, third] = records(3);

    // Nobody has asked yet: a write keeps nothing, and matching projects the post itself, the same way.
    const written = projections.project(first!);
    const asked = projections.of(first!);
    expect(asked).not.toBe(written);
    expect(asked).toEqual(projectPost(first!));

    // Matching asks: the next writes keep theirs, and matching reads those very objects.
    clock += 1000;
    const kept = projections.project(second!);
    expect(projections.of(second!)).toBe(kept);

    // A quiet spell longer than the window: writes stop keeping.
    clock += KEEP_WHILE_ASKED_MS + 1;
    const late = projections.project(third!);
    expect(projections.of(third!)).not.toBe(late);
    expect(projections.of(third!)).toEqual(late);
  });
});
