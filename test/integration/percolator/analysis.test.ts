import { Client } from '@elastic/elasticsearch';
import { afterAll, describe, expect, it } from 'vitest';
import { standardTokens } from '../../../src/percolator/analysis/standard-tokenizer.ts';
import { generateObservations } from '../../../src/seed/generator.ts';

// Saved searches are matched in memory (src/percolator), with the engine's analysis reproduced
// in the process: a token the engine would cut differently is a post an alert misses or invents.
// The oracle is the engine itself (`_analyze`), on every text of the demo corpus and on the cases
// where Unicode word segmentation has rules of its own.
const es = new Client({ node: (process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200').split(',')[0]! });

afterAll(async () => {
  await es.close();
});

const EDGE_CASES = [
  '🔥🔥🔥 fire',
  '© ©️ ™ 1️⃣ #️⃣ 🇯🇵 👍🏽 👨‍👩‍👧 🏳️‍🌈 ❤️ ❤ ⭐️ 🤷‍♀️ 👩🏽‍💻 🫶🏻',
  '私のスキンケアルーティン 食べる ケア用品 ｶﾀｶﾅ テスト・ワード ｰ 中文字符 漢字かな交じり文',
  "don't 3.5 e.g. foo_bar U.S.A. http://x.com/a?b=1 a@b.com a.1 1.a 1,000 a,b a:b 1:2 x² ½ co\u00ADop",
  "L’été d’or ’tis rock'n'roll 3'4 ...dots-- -x- x--y",
  'ภาษาไทย ok 한국어 테스트 ΣΟΦΟΣ İstanbul Straße ǅemal naïve Ñandú',
  'اللغة العربية ١٢٣ हिन्दी भाषा שלום עולם',
  '#hashtag @handle $5 €10 50% 24/7 a+b c# ＡＢＣ１２３',
  'x'.repeat(300),
];

/** The corpus's texts: every string of its observations with a space or a non-ASCII character. */
function corpusTexts(): string[] {
  const texts = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (/\s|\P{ASCII}/u.test(value)) texts.add(value);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  for (const observation of generateObservations({ posts: 1500, accounts: 150, seed: 5 })) walk(observation);
  return [...texts];
}

async function engineTokens(text: string | string[], lowercase: boolean): Promise<string[]> {
  const answer = await es.indices.analyze({ tokenizer: 'standard', filter: lowercase ? ['lowercase'] : [], text });
  return (answer.tokens ?? []).map((t) => t.token);
}

describe("the engine's analysis in memory", () => {
  it('cuts and lowercases every text of the demo corpus and every edge case as the engine does', async () => {
    const texts = [...corpusTexts(), ...EDGE_CASES];
    expect(texts.length).toBeGreaterThan(5000);
    for (let i = 0; i < texts.length; i += 250) {
      const chunk = texts.slice(i, i + 250);
      const mine = chunk.flatMap((t) => standardTokens(t, true));
      const engine = await engineTokens(chunk, true);
      if (JSON.stringify(mine) === JSON.stringify(engine)) continue;
      // Name the first text that differs.
      for (const text of chunk) expect(standardTokens(text, true), text).toEqual(await engineTokens(text, true));
    }
  });

  it('keeps case when the analyzer has no lowercase filter', async () => {
    for (const text of EDGE_CASES) expect(standardTokens(text, false), text).toEqual(await engineTokens(text, false));
  });
});
