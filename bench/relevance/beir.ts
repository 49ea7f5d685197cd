/**
 * Loaders for a BEIR-format collection: `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl`
 * (`_id`, `text`) and `qrels/<split>.tsv` (`query-id`, `corpus-id`, `score`, with a header).
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Qrels } from './ndcg.ts';

export interface BeirDoc {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

/** The repository root (this file is bench/relevance/beir.ts). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** SciFact in the shared folder beside the repository, or `BEIR_SCIFACT_DIR`. */
export function scifactDir(): string {
  return process.env['BEIR_SCIFACT_DIR'] ?? path.resolve(REPO_ROOT, '../shared/eval/scifact');
}

async function* lines(file: string): AsyncGenerator<{ line: string; number: number }> {
  const reader = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let number = 0;
  for await (const line of reader) {
    number++;
    if (line.trim() !== '') yield { line, number };
  }
}

function stringField(record: Record<string, unknown>, key: string, where: string): string {
  const value = record[key];
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'number') return String(value);
  throw new Error(`${where}: field ${key} is not a string`);
}

async function* jsonl(file: string): AsyncGenerator<{ record: Record<string, unknown>; where: string }> {
  for await (const { line, number } of lines(file)) {
    const where = `${file}:${number}`;
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`${where}: not an object`);
    yield { record: parsed as Record<string, unknown>, where };
  }
}

/** Every corpus document, in file order. */
export async function loadCorpus(dir: string): Promise<BeirDoc[]> {
  const docs: BeirDoc[] = [];
  for await (const { record, where } of jsonl(path.join(dir, 'corpus.jsonl'))) {
    const id = stringField(record, '_id', where);
    if (id === '') throw new Error(`${where}: empty _id`);
    docs.push({ id, title: stringField(record, 'title', where), text: stringField(record, 'text', where) });
  }
  return docs;
}

/** Query id -> query text. */
export async function loadQueries(dir: string): Promise<Map<string, string>> {
  const queries = new Map<string, string>();
  for await (const { record, where } of jsonl(path.join(dir, 'queries.jsonl'))) {
    queries.set(stringField(record, '_id', where), stringField(record, 'text', where));
  }
  return queries;
}

/** Query id -> (document id -> relevance), from `qrels/<split>.tsv`; the header line is skipped. */
export async function loadQrels(dir: string, split = 'test'): Promise<Qrels> {
  const file = path.join(dir, 'qrels', `${split}.tsv`);
  const qrels = new Map<string, Map<string, number>>();
  for await (const { line, number } of lines(file)) {
    const [queryId, docId, score] = line.split('\t').map((cell) => cell.trim());
    if (number === 1 && queryId === 'query-id') continue;
    const rel = Number(score);
    if (!queryId || !docId || score === undefined || !Number.isFinite(rel)) {
      throw new Error(`${file}:${number}: expected query-id<TAB>corpus-id<TAB>score`);
    }
    let judgments = qrels.get(queryId);
    if (!judgments) qrels.set(queryId, (judgments = new Map()));
    judgments.set(docId, rel);
  }
  return qrels;
}
