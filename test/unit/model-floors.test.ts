import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIMILARITY_FLOOR, relevanceFloors } from '../../src/embedding/model-floors.ts';

// Model folders as the plan checks them (config.json and the q8 weights' file), named as the models are.
const root = mkdtempSync(path.join(tmpdir(), 'model-floors-'));
function folder(name: string): string {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ hidden_size: 384 }));
  writeFileSync(path.join(dir, 'onnx', 'model_quantized.onnx'), '');
  return dir;
}
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = (MODEL_DIR: string | undefined, floors: { similarity?: number; unmatched?: number } = {}) => ({
  ...(MODEL_DIR === undefined ? {} : { MODEL_DIR }),
  EMBEDDINGS: 'auto' as const,
  EMBEDDING_DTYPE: 'q8' as const,
  EMBEDDING_THREADS: 1,
  ...(floors.similarity === undefined ? {} : { SEARCH_SIMILARITY_FLOOR: floors.similarity }),
  ...(floors.unmatched === undefined ? {} : { SEARCH_SIMILARITY_FLOOR_UNMATCHED: floors.unmatched }),
});

describe('relevance floors follow the model', () => {
  it("takes each known model's calibration: all-MiniLM-L6-v2's one floor, bge-small-en-v1.5's two", () => {
    expect(relevanceFloors(config(folder('all-MiniLM-L6-v2')))).toEqual({
      similarity: 0.3,
      related: 0.51,
      source: 'calibrated for all-MiniLM-L6-v2',
    });
    expect(relevanceFloors(config(folder('bge-small-en-v1.5')))).toEqual({
      similarity: 0.55,
      unmatched: 0.7,
      sentence: 0.56,
      related: 0.77,
      source: 'calibrated for bge-small-en-v1.5',
    });
  });

  it('lets the configuration override either floor, -1 turning one off', () => {
    const bge = folder('bge-small-en-v1.5');
    // A question read as a sentence sits as much higher under a configured floor.
    expect(relevanceFloors(config(bge, { similarity: 0.6 }))).toEqual({
      similarity: 0.6,
      unmatched: 0.7,
      sentence: 0.61,
      // Posts against posts: the model's own, whatever the query floors.
      related: 0.77,
      source: 'calibrated for bge-small-en-v1.5',
    });
    expect(relevanceFloors(config(bge, { similarity: -1, unmatched: 0.8 }))).toEqual({
      similarity: null,
      unmatched: 0.8,
      sentence: null,
      related: 0.77,
      source: 'configured',
    });
    expect(relevanceFloors(config(folder('all-MiniLM-L6-v2'), { similarity: 0.25 }))).toEqual({
      similarity: 0.25,
      related: 0.51,
      source: 'configured',
    });
  });

  it('gives a model it does not know, or no model, the default floor and says so', () => {
    const unknown = relevanceFloors(config(folder('my-own-model')));
    expect(unknown).toEqual({
      similarity: DEFAULT_SIMILARITY_FLOOR,
      source: 'the default: no calibration for this model',
    });
    expect(relevanceFloors(config(undefined)).similarity).toBe(DEFAULT_SIMILARITY_FLOOR);
  });
});
