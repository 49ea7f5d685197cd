import { StemmerDe } from '@nlpjs/lang-de';
import { StemmerEs } from '@nlpjs/lang-es';
import { StemmerFr } from '@nlpjs/lang-fr';
import { StemmerIt } from '@nlpjs/lang-it';
import { StemmerPt } from '@nlpjs/lang-pt';
import { eld } from 'eld/extrasmall';
import porter2 from 'wink-porter2-stemmer';
import { ENGLISH_STOP, memo, type Stem } from './analysis.ts';
import { contentWords, functionWordsOf } from './function-words.ts';
import { textMemo } from './text-memo.ts';

/**
 * Per-language client-side analysis (docs/api-decisions.md, "Languages"): the
 * engine has no language analyzers, no ICU and no `cjk_bigram`, so the service stems and segments
 * text itself, for documents at projection time and for queries, as it did for English alone.
 *
 * - Latin-script words: the Snowball stemmer of the text's language (@nlpjs ports for es, pt, fr,
 *   de, it; Porter2 for English and for any language without a stemmer here, as before).
 * - Japanese, Chinese and Thai runs: word boundaries from `Intl.Segmenter` (ICU, built into Node);
 *   each word becomes one ASCII token (`u<hex code point>…`), because the engine's `standard`
 *   tokenizer would split the words back into single ideographs.
 */

/** Languages with a stemmer of their own. */
export const STEMMED_LANGUAGES = ['en', 'es', 'pt', 'fr', 'de', 'it'] as const;
/** Languages the detector chooses among: those of the demo data (ja is segmented, not stemmed). */
export const DETECTED_LANGUAGES = [...STEMMED_LANGUAGES, 'ja'] as const;

type NlpStemmer = { stemWord(word: string): string };
const snowball = (stemmer: NlpStemmer): Stem => memo((word) => stemmer.stemWord(word));
const STEMS: Readonly<Record<string, Stem>> = {
  en: memo(porter2),
  es: snowball(new StemmerEs()),
  pt: snowball(new StemmerPt()),
  fr: snowball(new StemmerFr()),
  de: snowball(new StemmerDe()),
  it: snowball(new StemmerIt()),
};

/** A run of letters, combining marks and digits, with inner apostrophes kept (as analysis.ts). */
const WORD = /[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}\p{N}]+)*/gu;
/** Scripts written without spaces between words. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;
const UNSPACED_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\u30fc]+/gu;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const THAI = /\p{Script=Thai}/u;
const segmenters = new Map<string, Intl.Segmenter>();

function segmenter(locale: string): Intl.Segmenter {
  let s = segmenters.get(locale);
  if (!s) segmenters.set(locale, (s = new Intl.Segmenter(locale, { granularity: 'word' })));
  return s;
}

/** One segmented word as a single token the `standard` tokenizer keeps whole. */
function unspacedToken(word: string): string {
  let out = '';
  for (const ch of word) out += `u${ch.codePointAt(0)!.toString(16)}`;
  return out;
}

/**
 * The words of a run holding an unspaced script, by `Intl.Segmenter` (ja when it has kana, th, else
 * zh): its unspaced words as tokens, and a Latin word or number written into it ("わかるDIY") as
 * `latin` makes it, the word a query holds as plain letters (`mixedWords`).
 */
function segmentRun(run: string, out: string[], latin: (word: string) => void): void {
  const locale = KANA.test(run) ? 'ja' : THAI.test(run) ? 'th' : 'zh';
  for (const s of segmenter(locale).segment(run)) {
    if (!s.isWordLike) continue;
    if (UNSPACED.test(s.segment)) out.push(unspacedToken(s.segment));
    else latin(s.segment);
  }
}

/** Whether `text` holds a letter of a script written without spaces between words (Japanese, Chinese, Thai). */
export function holdsUnspacedScript(text: string): boolean {
  return UNSPACED.test(text);
}

/** The words of a text's unspaced-script runs (Japanese, Chinese, Thai), by `Intl.Segmenter`, in order. */
export function unspacedWords(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.matchAll(UNSPACED_RUN)) {
    const locale = KANA.test(run) ? 'ja' : THAI.test(run) ? 'th' : 'zh';
    for (const s of segmenter(locale).segment(run)) if (s.isWordLike) out.push(s.segment);
  }
  return out;
}

/** The text without its unspaced-script runs (their words are matched as phrases, see post-query.ts). */
export function withoutUnspaced(text: string): string {
  return text.replace(UNSPACED_RUN, ' ');
}

/** `pt-BR` → `pt`; null for nothing usable. */
function primarySubtag(tag: string | null | undefined): string | null {
  const code = tag?.split(/[-_]/)[0]?.toLowerCase();
  return code && /^[a-z]{2,3}$/.test(code) ? code : null;
}

/** The language the detector finds, and whether it is sure (eld's own `isReliable`). */
export interface DetectedLanguage {
  language: string;
  confident: boolean;
}

/**
 * Detects the language of a text among {@link DETECTED_LANGUAGES}: script first (kana means
 * Japanese, Thai script Thai, other ideographs Chinese), then eld's verdict on the text's first
 * {@link DETECTION_CHARS} characters; English when it has none. Memoized.
 *
 * Why eld (its smallest n-gram database): detection is the costliest step of projecting a post,
 * and the intake projects every post at least twice. Against tinyld, which this replaced, on the
 * seed generator's texts (bench/intake.md, "Language detection in the worker"): ~45 µs instead of
 * ~250 µs a caption, captions 100% right instead of 98.4%; +4 MiB of live heap once its table is
 * pruned (below).
 */
export function detectLanguage(text: string): DetectedLanguage {
  return detected.get(text, detectUncached, memoizing);
}

/** False while {@link withoutMemoizing} runs. */
let memoizing = true;

/**
 * Runs `work`, which must be synchronous, with the detection and analysis memos read but not
 * written. For a reader of older texts, once each: matching saved searches against earlier
 * versions of posts, or against posts read back by the alerts' recovery pass, and storing every
 * text it missed only pushed out the recent ones the intake's repeated projections reuse. In one
 * CPU profile each of the alerts bench's sustained round, the language detection of reading posts
 * back fell from 2.4 to 1.0 s per 20,000 posts (bench/alerts.md).
 */
export function withoutMemoizing<T>(work: () => T): T {
  const before = memoizing;
  memoizing = false;
  try {
    return work();
  } finally {
    memoizing = before;
  }
}

/**
 * Detections and analyses of recent texts: the intake projects a post several times within seconds
 * (text-memo.ts). 2M characters of keys per generation hold the texts of a few thousand posts.
 */
const MEMO_CHARS = 2_000_000;
const detected = textMemo<DetectedLanguage>(MEMO_CHARS);
/**
 * Keyed by the text alone, holding its analysis in the language last asked: a document's text is
 * analyzed in one language (another only when its post's declared language arrives and differs
 * from the detected one, and then for good), and a key joined from language and text would be a
 * new string to copy and hash at every call (measured: as costly as a detection).
 */
const analyzed = textMemo<{ language: string; analysis: string }>(MEMO_CHARS, (value) => value.analysis.length);
/** An instance of its own, so that its language subset is this module's alone. */
const detector = eld.newInstance();
detector.setLanguageSubset([...DETECTED_LANGUAGES]);
const footprint = await pruneDetectorDatabase();

/**
 * Drops from eld's n-gram database (shared by its instances, loaded once) the scores of languages
 * outside {@link DETECTED_LANGUAGES}, and the n-grams left without any: 76% of them, ~16 MiB of
 * the heap of every process. Detection is unchanged: a language's score sums only its own entries,
 * and the subset filters the others out of the results anyway (checked on the seed's texts: the
 * same verdicts, a little faster). eld can write such a subset database only in a browser
 * (`saveSubset`), and its package exports no path to the database, hence the path beside its
 * entry point. Returns the n-grams kept, or null when the database is not where or what this
 * expects (a later eld): detection then runs on the whole database.
 */
async function pruneDetectorDatabase(): Promise<{ ngrams: number; pruned: number } | null> {
  try {
    const url = new URL('../ngrams/extrasmall.js', import.meta.resolve('eld/extrasmall'));
    // The eld package's n-gram module: its export has no type declaration.
    const { ngramsData } = (await import(url.href)) as {
      ngramsData?: { languages?: Record<string, string>; ngrams?: Record<string, Record<string, number>> };
    };
    if (!ngramsData?.languages || !ngramsData.ngrams) return null;
    const wanted = new Set<string>(DETECTED_LANGUAGES);
    const keep = new Set(Object.keys(ngramsData.languages).filter((id) => wanted.has(ngramsData.languages![id]!)));
    let ngrams = 0;
    let pruned = 0;
    for (const gram of Object.keys(ngramsData.ngrams)) {
      const scores = ngramsData.ngrams[gram]!;
      for (const id of Object.keys(scores)) if (!keep.has(id)) delete scores[id];
      if (Object.keys(scores).length === 0) {
        delete ngramsData.ngrams[gram];
        pruned++;
      } else ngrams++;
    }
    return { ngrams, pruned };
  } catch {
    return null;
  }
}

/** What {@link pruneDetectorDatabase} did at load: n-grams kept and dropped, or null if it could not. */
export function detectorFootprint(): { ngrams: number; pruned: number } | null {
  return footprint;
}

/**
 * Characters of a text the detector reads: its start, cut at a word boundary. Detection is
 * reliable from ~150 characters on, and detectors are trained and benchmarked on sentences; past
 * that, a longer text costs time (the cost grows with its n-grams) and adds mostly what mixes
 * languages (hashtag lists, brand names, quoted lines) at its end.
 */
const DETECTION_CHARS = 200;

function detectionSample(text: string): string {
  if (text.length <= DETECTION_CHARS) return text;
  const space = text.lastIndexOf(' ', DETECTION_CHARS);
  return text.slice(0, space > DETECTION_CHARS / 2 ? space : DETECTION_CHARS);
}

function detectUncached(text: string): DetectedLanguage {
  if (KANA.test(text)) return Object.freeze({ language: 'ja', confident: true });
  if (THAI.test(text)) return Object.freeze({ language: 'th', confident: true });
  // Ideographs without kana: Chinese, or kanji-only Japanese; either way not English.
  if (UNSPACED.test(text)) return Object.freeze({ language: 'zh', confident: true });
  const result = detector.detect(detectionSample(text));
  if (!result.language) return Object.freeze({ language: 'en', confident: false });
  return Object.freeze({ language: result.language, confident: result.isReliable() });
}

/** A post's analysis language: its declared `primary_language`, else detected from its text. */
export function documentLanguage(declared: string | null | undefined, text: string): string {
  return primarySubtag(declared) ?? detectLanguage(text).language;
}

/**
 * Folds compatibility forms (NFKC), lowercases, splits into words, segments unspaced scripts, drops
 * a possessive 's and (for English) English stop words, stems with the language's stemmer; joins
 * with single spaces.
 */
export function analyzeIn(text: string, language: string): string {
  const memo = analyzed.get(text, () => ({ language, analysis: analyzeUncached(text, language) }), memoizing);
  if (memo.language !== language) {
    // The latest language wins: a post's declared language replaces the detected one.
    memo.language = language;
    memo.analysis = analyzeUncached(text, language);
  }
  return memo.analysis;
}

function analyzeUncached(written: string, language: string): string {
  const stem = STEMS[language] ?? STEMS['en']!;
  const english = !(language in STEMS) || language === 'en';
  const out: string[] = [];
  // Compatibility forms folded (NFKC), as a stemmer folds inflections: full-width Latin letters and
  // digits as typed by a Japanese IME ("ＤＩＹ", "２０２４"), half-width katakana ("ｽｷﾝｹｱ"),
  // ligatures ("ﬁ"), super- and subscripts ("CO₂" as "co2"). Both sides of the stemmed fields
  // fold; the exact fields keep the text as written. ~0.3 µs a text (a text with none to fold is
  // returned as is): nothing beside the stemming.
  const text = written.normalize('NFKC');
  // One test of the whole text: most texts hold no unspaced script, and their words need none.
  const unspaced = UNSPACED.test(text);
  const word = (raw: string): void => {
    const token = raw.endsWith("'s") ? raw.slice(0, -2) : raw;
    if (!(english && ENGLISH_STOP.has(token))) out.push(stem(token));
  };
  // `match` with the global flag returns the words alone; `matchAll` would allocate a match
  // object per word (measured: the largest share of what analysis allocates).
  for (const raw of text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .match(WORD) ?? []) {
    if (unspaced && UNSPACED.test(raw)) segmentRun(raw, out, word);
    else word(raw);
  }
  return out.join(' ');
}

/** How a query is analyzed, and whether the (English-only) model can read it. */
export interface QueryAnalysis {
  /**
   * The query's words without its language's function words (function-words.ts), lowercased and
   * space-separated, unspaced-script runs as their segmented words; every word when nothing else
   * is left. What the lexical sides search for.
   */
  content: string;
  /** The content's stemmed text for the `_stemmed` fields. */
  stemmed: string;
  language: string;
  /**
   * False when the query is surely in another language than English (see the fusion's lean), or
   * holds no word at all (`#`, `...`, emoji): the model reads nothing of it, yet puts its vector
   * near posts of every subject (bge-small-en-v1.5's nearest demo posts to "#" passed even the
   * unmatched floor), so it is searched by its words alone, which match nothing.
   */
  semanticReadable: boolean;
}

/**
 * Fewer words than this, and a detector's verdict on a query is a guess whatever it says of
 * itself: detectors are trained on sentences, and eld calls "serum routine" surely French and
 * "skincare" surely Italian. Such a query's language is taken as unknown (its script aside).
 */
const SURE_QUERY_WORDS = 3;

/** Function words of the other stemmed languages that English has no word for ("de", "la", "meine", "com"). */
const FOREIGN_FUNCTION_WORDS: ReadonlySet<string> = new Set(
  STEMMED_LANGUAGES.filter((l) => l !== 'en')
    .flatMap((l) => [...functionWordsOf(l)])
    .filter((w) => !functionWordsOf('en').has(w)),
);
/** In a word (letters, marks, digits): a letter or mark English does not write (é, ñ, ß, ç, ã, ü). */
const NON_ENGLISH_LETTER = /[^\p{ASCII}]/u;

/**
 * Whether a query shows another language in its own words: a letter English does not write, or a
 * function word of another stemmed language that English lacks. A detector's verdict of another
 * language needs this too: on a few content words it reads letter n-grams that English shares
 * ("skin barrier repair routine" comes out surely French, "solo travel tips" surely Spanish: 9 of
 * the seed catalog's 90 topics), while the queries in other languages that people type carry an
 * accent or a function word ("recetas veganas fáciles", "rutina de cuidado de la piel").
 */
function showsAnotherLanguage(words: readonly string[]): boolean {
  return words.some((w) => FOREIGN_FUNCTION_WORDS.has(w) || NON_ENGLISH_LETTER.test(w));
}

/**
 * Analyzes a query. English stems always take part (English is most of the data and the model's
 * language), and alone when the detector's guess for a query of {@link SURE_QUERY_WORDS} words or
 * more is English, sure or not: the guess agrees with what most queries are (measured: adding
 * other stems to SciFact's unsure-English queries cost BM25 0.004 nDCG@10). When the detector is
 * sure of another language and the query shows it ({@link showsAnotherLanguage}), its stems join; when the language is unknown — a guess of another
 * language without being sure, or any query of one or two words ("Küche", "entrenar", "serum
 * routine") — the stems of every stemmed language join, so a Spanish "entrenar" still meets the
 * Spanish stem of "entrenamientos" whatever the guess. A stem that matches nothing costs nothing.
 * A script (kana, Thai, other ideographs) is always sure.
 */
export function analyzeQuery(query: string): QueryAnalysis {
  const detected = detectLanguage(query);
  const byScript = UNSPACED.test(query);
  const words = query.toLowerCase().match(WORD) ?? [];
  const short = !byScript && words.length < SURE_QUERY_WORDS;
  const confident = detected.confident && (byScript || detected.language === 'en' || showsAnotherLanguage(words));
  // Function words are those of the query's language when it is known, else English's.
  const known = byScript || (!short && (confident || detected.language === 'en'));
  const content = queryContent(query, known ? detected.language : 'en');
  const english = analyzeIn(content, 'en');
  if (detected.language === 'en' && !short)
    return { content, stemmed: english, language: 'en', semanticReadable: true };
  const sure = confident && !short;
  const tokens = english.length > 0 ? english.split(' ') : [];
  const seen = new Set(tokens);
  const others = sure ? [detected.language] : STEMMED_LANGUAGES.filter((l) => l !== 'en');
  for (const language of others) {
    for (const token of analyzeIn(content, language).split(' ')) {
      // English stop words stay out: an English query must not gain "for" or "the".
      if (token.length > 0 && !seen.has(token) && !ENGLISH_STOP.has(token)) {
        seen.add(token);
        tokens.push(token);
      }
    }
  }
  return {
    content,
    stemmed: tokens.join(' '),
    language: detected.language,
    semanticReadable: words.length > 0 && !(sure && detected.language !== 'en'),
  };
}

/**
 * The query's words (lowercased, curly apostrophes straightened, unspaced-script runs segmented)
 * without the function words of `language`, space-separated; all of them when nothing else is left.
 */
function queryContent(query: string, language: string): string {
  const words: string[] = [];
  for (const raw of query
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .match(WORD) ?? []) {
    if (UNSPACED.test(raw)) words.push(...mixedWords(raw));
    else words.push(raw);
  }
  return contentWords(words, language).join(' ');
}

/**
 * The words of a run of letters that holds an unspaced script: its unspaced runs segmented, and
 * what lies between them (Latin letters, digits) as words of their own, in order. "DIYの始め方" is
 * "diy", "の", "始め", "方": a Latin word written into Japanese is a word of the query.
 */
function mixedWords(raw: string): string[] {
  const out: string[] = [];
  let last = 0;
  for (const match of raw.matchAll(UNSPACED_RUN)) {
    if (match.index > last) out.push(raw.slice(last, match.index));
    out.push(...unspacedWords(match[0]));
    last = match.index + match[0].length;
  }
  if (last < raw.length) out.push(raw.slice(last));
  return out;
}
