import { describe, expect, it } from 'vitest';
import { mintId } from '../../src/contract/ids.ts';
import { parseObservation, type Observation } from '../../src/contract/observations.ts';
import { applyPost, applyPostEnrichment } from '../../src/domain/merge.ts';
import { emptyPost, type PostRecord } from '../../src/domain/records.ts';
import { projectPostVectors } from '../../src/engine/elasticsearch/documents/vector-projection.ts';
import { projectPost } from '../../src/engine/elasticsearch/documents/projection.ts';
import { engineVector, queryVector } from '../../src/engine/elasticsearch/vectors.ts';
import {
  embeddingTextHash,
  embeddingTextsHash,
  MAX_PASSAGES,
  passagesOf,
  postEmbeddingText,
  postPassageTexts,
} from '../../src/text/embedding-text.ts';
import { encodeVector } from '../../src/text/vector-codec.ts';
import { postEnrichmentObs, postObs } from '../helpers/fixtures.ts';

function valid(value: unknown): Observation {
  const parsed = parseObservation(value);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.value;
}

/** A post with this caption, and with this transcript when given. */
function post(caption: string, transcript?: string): PostRecord {
  const obs = valid(postObs('author', { platform_id: 'p1', caption }));
  const record = applyPost(emptyPost(mintId('post', 'p1'), 'p1'), obs as never);
  if (transcript === undefined) return record;
  const media = (obs as unknown as { media: Array<{ platform_id: string }> }).media;
  const enrichment = valid(postEnrichmentObs('p1', { media: [{ platform_id: media[0]!.platform_id, transcript }] }));
  return applyPostEnrichment(record, enrichment as never);
}

/** `n` distinct words: w0 w1 w2 … */
const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${from + i}`).join(' ');

describe("a post's passages", () => {
  it('gives a post of one window or less none: its head is all there is', () => {
    expect(postPassageTexts(post(words(150)))).toEqual([]);
    expect(postPassageTexts(post('Short caption #tag'))).toEqual([]);
  });

  it('reads the text past the head in half-overlapping windows of 150 words', () => {
    expect(passagesOf('', words(300))).toEqual([words(150, 75), words(150, 150)]);
    // A window follows while the one before it has not reached the end of the text.
    expect(passagesOf('', words(226))).toEqual([words(150, 75), words(76, 150)]);
    expect(passagesOf('', words(225))).toEqual([words(150, 75)]);
  });

  it("heads each passage with the caption's first line when it is short, a title or a hook", () => {
    const passages = postPassageTexts(post(`My trail diary\n${words(300)}`));
    expect(passages).toEqual([`My trail diary\n\n${words(150, 75)}`, `My trail diary\n\n${words(150, 150)}`]);
    // A long first line is a paragraph, not a title: no lead.
    const paragraph = `${'long '.repeat(60)}\n${words(300)}`;
    expect(postPassageTexts(post(paragraph)).every((p) => !p.includes('\n'))).toBe(true);
  });

  it("reads only the caption: a long transcript is the enrichment's, summarized in the head", () => {
    expect(postPassageTexts(post('Quick caption', words(400)))).toEqual([]);
    const passages = postPassageTexts(post(words(300), words(400, 1_000)));
    expect(passages).toEqual([words(150, 75), words(150, 150)]);
  });

  it('keeps at most MAX_PASSAGES per post, from its start', () => {
    const passages = passagesOf('', words(5_000));
    expect(passages).toHaveLength(MAX_PASSAGES);
    expect(passages[0]).toBe(words(150, 75));
  });

  it('fills the head with a caption alone; beside other parts the caption is capped', () => {
    const caption = words(400);
    expect(postEmbeddingText(post(caption)).length).toBeGreaterThan(1_500);
    // Capped, so the text after it (the summary, here a transcript) stays in the head.
    const head = postEmbeddingText(post(caption, 'the transcript'));
    expect(head.split('\n')[0]!.length).toBeLessThanOrEqual(700);
    expect(head.endsWith('the transcript')).toBe(true);
  });

  it("keeps the head's own hash for a post without passages (no re-embedding for them)", () => {
    expect(embeddingTextsHash('head', [])).toBe(embeddingTextHash('head'));
    expect(embeddingTextsHash('head', ['a passage'])).not.toBe(embeddingTextHash('head'));
    expect(embeddingTextsHash('head', ['a', 'b'])).not.toBe(embeddingTextsHash('head', ['b', 'a']));
  });

  it("projects the passage vectors as nested documents beside the head vector, in the post's vector document", () => {
    const record = post(words(300));
    const vector = encodeVector([1, 0, 0]);
    const embedded = {
      ...record,
      embedding: { model: 'm', text_hash: 'h', vector, passages: [encodeVector([0, 1, 0])] },
    };
    const postDoc = projectPost(embedded);
    // The post names the model; its vectors are in its vector document only.
    expect(postDoc['embedding_model']).toBe('m');
    expect(postDoc['embedding']).toBeUndefined();
    const doc = projectPostVectors(postDoc, embedded)!.doc;
    // As the engine reads them: base64 of big-endian float32.
    const floats = (b64: unknown) => {
      const bytes = Buffer.from(b64 as string, 'base64');
      return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatBE(i * 4));
    };
    expect(floats(doc['embedding'])).toEqual([1, 0, 0]);
    expect((doc['passages'] as Array<{ vector: unknown }>).map((p) => floats(p.vector))).toEqual([[0, 1, 0]]);
    const headOnly = { ...record, embedding: { model: 'm', text_hash: 'h', vector } };
    expect(projectPostVectors(projectPost(headOnly), headOnly)!.doc['passages']).toBeUndefined();
    expect(projectPostVectors(projectPost(record), record)).toBeNull();
  });

  it('sends the engine the very floats the record stores, whatever their bits', () => {
    const floats = Float32Array.from([0.1, -1e-30, 3.4e38, -0, 1 / 3, 2 ** -149]);
    const sent = Buffer.from(engineVector(encodeVector(floats)) as string, 'base64');
    expect(Array.from({ length: floats.length }, (_, i) => sent.readFloatBE(i * 4))).toEqual(Array.from(floats));
    // A query vector in numbers (a dequantized one, doubles) reaches the engine as its float32 values.
    const asked = Buffer.from(queryVector([0.1, -2.5, 1 / 3]) as unknown as string, 'base64');
    expect([0, 1, 2].map((i) => asked.readFloatBE(i * 4))).toEqual(Array.from(Float32Array.from([0.1, -2.5, 1 / 3])));
  });
});
