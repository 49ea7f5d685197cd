import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Config } from '../internal/config.ts';
import { fieldOf } from '../internal/typed-objects.ts';
import type { ModelThreadOptions, Pooling, Prompts } from './model-thread.ts';

/**
 * Reading a model folder and the configuration into a plan: which model, which weights, which
 * prompts and truncation, or why there is none. Nothing here starts a thread.
 */

/** The embedding settings of the configuration (the query cache's size defaults to the configuration's default). */
export type EmbeddingConfig = Pick<
  Config,
  'MODEL_DIR' | 'MODEL_ID' | 'EMBEDDINGS' | 'EMBEDDING_DTYPE' | 'EMBEDDING_THREADS'
> &
  Partial<Pick<Config, 'EMBEDDING_QUERY_CACHE_MB' | 'EMBEDDING_NOISE'>>;

/** A JSON file of the model folder, as the unknown it is (its fields are read one by one). */
function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** EMBEDDING_QUERY_CACHE_MB when the caller passes none (the configuration's default). */
const QUERY_CACHE_DEFAULT_MB = 4;
/** What {@link planEmbedder} decides: no model, a model that cannot load, or a model thread to start. */
export type Plan =
  | { kind: 'off'; detail: string }
  | { kind: 'failed'; modelId: string | null; detail: string }
  | {
      kind: 'thread';
      modelId: string;
      dimensions: number;
      source: string;
      thread: ModelThreadOptions;
      cacheBytes: number;
    };

const ONNX_FILES: Record<EmbeddingConfig['EMBEDDING_DTYPE'], string> = {
  q8: 'onnx/model_quantized.onnx',
  fp32: 'onnx/model.onnx',
};

/**
 * Tokens one model run reads at most, whatever the model: a post's head is its first 256 tokens and
 * its passages (150 words, src/text/embedding-text.ts) read the rest. onnxruntime's arena keeps the
 * peak of the largest run for good, and a 512-token run of a 12-layer model holds twice a 256-token
 * one's: bge-small-en-v1.5 reading a long text grew a process by 29 MiB at 512 tokens against 13
 * for all-MiniLM-L6-v2 at 256 (bench/memory.md, "The default model's memory").
 */
export const MAX_TOKENS_PER_RUN = 256;

/**
 * sentence-transformers' truncation length (sentence_bert_config.json), which the model was
 * trained and evaluated with, up to {@link MAX_TOKENS_PER_RUN}; that bound when the folder does not say.
 */
function maxSeqLength(dir: string): number {
  try {
    const value = fieldOf(readJson(join(dir, 'sentence_bert_config.json')), 'max_seq_length');
    return typeof value === 'number' && value > 0 ? Math.min(value, MAX_TOKENS_PER_RUN) : MAX_TOKENS_PER_RUN;
  } catch {
    return MAX_TOKENS_PER_RUN;
  }
}

const NO_PROMPTS: Prompts = { query: '', document: '', sentence: '' };

/**
 * Models whose query prompt is an instruction for short queries: BGE's ("Represent this sentence for
 * searching relevant passages: "), which its model cards ask for when a short query looks for long
 * passages and not otherwise. A question, a whole sentence, is read without it: its first page runs
 * the model over 9 tokens fewer per text, and its vector answers under a floor of its own
 * (model-floors.ts; bench/relevance.md, "The floor of a question read as a sentence"). Other models'
 * query prompts mark a role the model needs on every query (e5's `query: `).
 */
const SHORT_QUERY_INSTRUCTION = /^bge-/;

/** The prompt before a whole-sentence query (Prompts.sentence) of the model named `name`. */
function sentencePrompt(name: string, query: string): string {
  return SHORT_QUERY_INSTRUCTION.test(name) ? '' : query;
}

/**
 * The prompts of a model folder (sentence-transformers' `config_sentence_transformers.json`,
 * `prompts`: e5's `{"query": "query: ", "document": "passage: "}`; `passage` is taken for
 * `document`). A model trained with them reads a query or a passage well only after its prompt.
 */
function promptsOf(dir: string): Prompts {
  try {
    const prompts = fieldOf(readJson(join(dir, 'config_sentence_transformers.json')), 'prompts');
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    const query = text(fieldOf(prompts, 'query'));
    return {
      query,
      document: text(fieldOf(prompts, 'document') ?? fieldOf(prompts, 'passage')),
      sentence: sentencePrompt(basename(dir), query),
    };
  } catch {
    return NO_PROMPTS;
  }
}

/**
 * The pooling of a model folder (sentence-transformers' `1_Pooling/config.json`): `cls` when it
 * pools the first token alone (`pooling_mode_cls_token`, BGE), else the mean (all-MiniLM-L6-v2, e5,
 * and a folder without the file). Any other mode (max, weighted mean) fails the plan: vectors pooled
 * another way than the model was trained for would be found, and wrong.
 */
function poolingOf(dir: string): Pooling | { unsupported: string } {
  const path = join(dir, '1_Pooling', 'config.json');
  if (!existsSync(path)) return 'mean';
  const config = readJson(path);
  const on = (mode: string) => fieldOf(config, mode) === true;
  const modes = [
    'pooling_mode_cls_token',
    'pooling_mode_mean_tokens',
    'pooling_mode_max_tokens',
    'pooling_mode_mean_sqrt_len_tokens',
    'pooling_mode_weightedmean_tokens',
    'pooling_mode_lasttoken',
  ].filter(on);
  if (modes.length === 1 && modes[0] === 'pooling_mode_cls_token') return 'cls';
  if (modes.length === 1 && modes[0] === 'pooling_mode_mean_tokens') return 'mean';
  return { unsupported: modes.join(' + ') || 'no mode' };
}

/** Decides from the configuration alone what to start, checking a model folder before any thread exists. */
export function planEmbedder(config: EmbeddingConfig): Plan {
  if (config.EMBEDDINGS === 'off') return { kind: 'off', detail: 'off: EMBEDDINGS=off (BM25 only)' };
  const dtype = config.EMBEDDING_DTYPE;
  const cacheBytes = (config.EMBEDDING_QUERY_CACHE_MB ?? QUERY_CACHE_DEFAULT_MB) * 1024 * 1024;
  const threads = config.EMBEDDING_THREADS > 0 ? config.EMBEDDING_THREADS : availableParallelism();
  if (config.MODEL_DIR) {
    const dir = resolve(config.MODEL_DIR);
    const name = basename(dir);
    const modelId = `${name}@${dtype}`;
    const failed = (why: string): Plan => ({ kind: 'failed', modelId, detail: `${modelId}: MODEL_DIR ${dir} ${why}` });
    if (!existsSync(dir)) return failed('does not exist');
    let hiddenSize: unknown;
    try {
      hiddenSize = fieldOf(readJson(join(dir, 'config.json')), 'hidden_size');
    } catch (error) {
      return failed(`has no readable config.json (${error instanceof Error ? error.message : String(error)})`);
    }
    if (!existsSync(join(dir, ONNX_FILES[dtype])))
      return failed(`has no ${ONNX_FILES[dtype]} (EMBEDDING_DTYPE=${dtype})`);
    let pooling: ReturnType<typeof poolingOf>;
    try {
      pooling = poolingOf(dir);
    } catch (error) {
      return failed(
        `has an unreadable 1_Pooling/config.json (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    if (typeof pooling !== 'string')
      return failed(`pools by ${pooling.unsupported}: only the mean or the CLS token is supported`);
    return {
      kind: 'thread',
      modelId,
      dimensions: typeof hiddenSize === 'number' ? hiddenSize : 0,
      source: dir,
      thread: {
        source: { folder: dir, weights: join(dir, ONNX_FILES[dtype]) },
        dtype,
        threads,
        maxTokens: maxSeqLength(dir),
        prompts: promptsOf(dir),
        pooling,
        noise: config.EMBEDDING_NOISE ?? null,
      },
      cacheBytes,
    };
  }
  if (config.MODEL_ID) {
    // The hub id, not just its last part: another publisher's export of the same model has other weights.
    const modelId = `${config.MODEL_ID}@${dtype}`;
    return {
      kind: 'thread',
      modelId,
      dimensions: 0,
      source: `the hub (${config.MODEL_ID})`,
      thread: {
        source: { hubId: config.MODEL_ID },
        dtype,
        threads,
        maxTokens: MAX_TOKENS_PER_RUN,
        prompts: NO_PROMPTS,
        noise: config.EMBEDDING_NOISE ?? null,
      },
      cacheBytes,
    };
  }
  if (config.EMBEDDINGS === 'on')
    return { kind: 'failed', modelId: null, detail: 'EMBEDDINGS=on but neither MODEL_DIR nor MODEL_ID is set' };
  return { kind: 'off', detail: 'off: MODEL_DIR is unset (BM25 only)' };
}
