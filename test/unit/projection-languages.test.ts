import { describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { applyPost, applyPostEnrichment } from '../../src/domain/merge.ts';
import { emptyPost, type PostRecord } from '../../src/domain/records.ts';
import { projectPost } from '../../src/engine/elasticsearch/documents/projection.ts';
import { generateObservations } from '../../src/seed/generator.ts';
import { analyzeIn } from '../../src/text/languages.ts';

function valid(value: unknown): Observation {
  const parsed = parseObservation(value);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
}

/** A post of the demo generator (valid by construction), with a Spanish caption. */
const generated = [...generateObservations({ posts: 20, accounts: 2, seed: 3 })].find(
  (o) => o['kind'] === 'post',
) as Record<string, unknown> & { platform_id: string; media: Array<{ platform_id: string }> };
const post = valid({ ...generated, caption: 'Mi rutina de cuidado de la piel por la mañana, paso a paso' });

function enriched(summary: string, visualDescription: string): PostRecord {
  const enrichment = valid({
    kind: 'post_enrichment',
    post_platform_id: generated.platform_id,
    produced_at: '2026-10-01T11:00:00Z',
    content_summary: summary,
    media: [{ platform_id: generated.media[0]!.platform_id, visual_description: visualDescription }],
  });
  const id = mintId('post', generated.platform_id);
  return applyPostEnrichment(applyPost(emptyPost(id, generated.platform_id), post as never), enrichment as never);
}

describe('the languages of a projected post', () => {
  it("analyzes the enrichment's visual descriptions in the language detected from its summary", () => {
    const visual = 'Close-up of the serum bottle on the shelf';
    const doc = projectPost(
      enriched(
        'Una creadora muestra su rutina de noche para la piel seca: limpiadora suave, sérum hidratante y crema de noche, con consejos para principiantes.',
        visual,
      ),
    );
    // One pipeline wrote both: the Spanish of the summary holds for the short English-looking
    // description too, whose English analysis would have dropped "of" and "the".
    expect(doc.visual_text_stemmed).toBe(analyzeIn(visual, 'es'));
    expect(doc.visual_text_stemmed).not.toBe(analyzeIn(visual, 'en'));
    expect(doc.content_text_stemmed).toContain('princip');
  });

  it('analyzes an English summary and its descriptions in English', () => {
    const visual = 'Close-up of the serum bottle on the shelf';
    const doc = projectPost(
      enriched(
        'A creator shows her night-time routine for dry skin: a gentle cleanser, a hydrating serum and a night cream.',
        visual,
      ),
    );
    expect(doc.visual_text_stemmed).toBe(analyzeIn(visual, 'en'));
  });
});
