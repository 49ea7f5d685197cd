import { foldCase } from '../../query/fields.ts';

/**
 * The engine's text analysis, reproduced in the process for the percolator (src/percolator):
 * Lucene's `standard` tokenizer (Unicode word segmentation, UAX #29, with the token types Lucene
 * adds: one token per Han ideograph and per Hiragana character, one per run of Katakana or of a
 * South-East Asian script, emoji sequences as tokens), the `lowercase` filter (one code point at a
 * time). Checked token for token against the engine's `_analyze` on the demo corpus in every
 * language it holds and on edge cases (test/integration/percolator/analysis.test.ts). The fields'
 * analyzers built of it are in analyzers.ts.
 *
 * Why not `Intl.Segmenter`: it implements the same rules, but segmenting a 1,500-character caption
 * took 1.1 ms against 16 µs for one regular expression (Node 20), and its dictionary
 * segmentation of Japanese and Thai is not what the index holds.
 */

/** Lucene cuts longer tokens into pieces of this length (StandardAnalyzer's default). */
export const MAX_TOKEN_LENGTH = 255;

// Word characters: letters other than the scripts tokenized apart below, decimal digits, the
// connector punctuation UAX #29 calls ExtendNumLet (`_`), each with its combining marks and format
// characters (WB4: `co\u00ADop` is one word).
const APART = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}`;
const ALNUM = String.raw`[[\p{L}\p{Nd}\p{Pc}]--[${APART}]][\p{M}\p{Cf}]*`;
// Characters that join two letters (MidLetter, MidNumLet) or two digits (MidNum, MidNumLet).
const JOINER = String.raw`[.'’‘:·׳״,;\u055F\u05F4\u2027\uFE13\uFE55\uFF1A\uFE52\uFF07\uFF0E\u066C\uFE50\uFE54\uFF0C\uFF1B\u037E\u0589\u060C\u060D\u07F8\u2044]`;
const EMOJI_UNIT = String.raw`\p{Extended_Pictographic}[\uFE0E\uFE0F]?\p{Emoji_Modifier}?`;
const EMOJI = String.raw`\p{Regional_Indicator}{2}|[0-9#\*]\uFE0F?\u20E3|${EMOJI_UNIT}(?:\u200D${EMOJI_UNIT})*[\u{E0020}-\u{E007F}]*`;
// Words first, the common case; a keycap (`1️⃣`) is matched as digits and marks either way.
const TOKEN = new RegExp(
  [
    String.raw`(?:${ALNUM})+(?:${JOINER}(?:${ALNUM})+)*`,
    EMOJI,
    String.raw`[\p{Script=Katakana}\u30FC\uFF70][\p{Script=Katakana}\u30FC\uFF70\p{M}]*`,
    String.raw`[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]+`,
    String.raw`[\p{Script=Han}\p{Script=Hiragana}][\p{M}]*`,
  ].join('|'),
  'gv',
);
const HAS_JOINER = new RegExp(JOINER, 'v');
/**
 * The same rules on text of ASCII characters only, where the word classes are letters, digits, `_`
 * and the joiners `.` `'` `:` `,` `;` (everything else breaks): three times faster than the
 * Unicode expression, and most captions and stems are ASCII.
 */
const ASCII_TEXT = /^\p{ASCII}*$/u;
const ASCII_TOKEN = /[A-Za-z0-9_]+(?:[.':,;][A-Za-z0-9_]+)*/g;
const ASCII_JOINER = /[.':,;]/;
const LETTER = /[\p{L}\p{Pc}]/u;
const DIGIT = /\p{Nd}/u;
/** Joiners between letters only (MidLetter), between digits only (MidNum), or both (MidNumLet). */
const MID_LETTER = new Set([':', '·', '׳', '״', '\u055F', '\u05F4', '\u2027', '\uFE13', '\uFE55', '\uFF1A']);
const MID_NUM = new Set([
  ',',
  ';',
  '\u066C',
  '\uFE50',
  '\uFE54',
  '\uFF0C',
  '\uFF1B',
  '\u037E',
  '\u0589',
  '\u060C',
  '\u060D',
  '\u07F8',
  '\u2044',
]);

/** The class of the last word character before `end` (marks and format characters skipped), or of the first from `start`. */
function classAt(token: string, index: number, step: 1 | -1): 'letter' | 'digit' | null {
  for (let i = index; i >= 0 && i < token.length; i += step) {
    const ch = token[i]!;
    if (LETTER.test(ch)) return 'letter';
    if (DIGIT.test(ch)) return 'digit';
    if (/[\p{M}\p{Cf}]/u.test(ch) || /[\uD800-\uDFFF]/.test(ch)) continue;
    return null;
  }
  return null;
}

/**
 * Splits a matched word at joiners whose neighbours UAX #29 does not join: a letter joiner between
 * letters (`e.g`, `don't`), a number joiner between digits (`3.5`, `1,000`); `a.1` is two words.
 */
function splitJoiners(token: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < token.length; i++) {
    const ch = token[i]!;
    if (!HAS_JOINER.test(ch)) continue;
    const before = classAt(token, i - 1, -1);
    const after = classAt(token, i + 1, 1);
    const joins = before === after && before !== null && (before === 'letter' ? !MID_NUM.has(ch) : !MID_LETTER.has(ch));
    if (joins) continue;
    out.push(token.slice(start, i));
    start = i + 1;
  }
  out.push(token.slice(start));
  return out.filter((t) => t.length > 0);
}

/**
 * Lowercases one code point at a time, as the `lowercase` filter does. `toLowerCase` gives the same
 * except for its two context or multi-character rules (final sigma, `İ`): only text holding those
 * takes the slower per-code-point path. Case never changes where words break.
 */
function lowercase(text: string): string {
  return /[Σİ]/.test(text) ? foldCase(text) : text.toLowerCase();
}

/** Gives `visit` the token, or its pieces of {@link MAX_TOKEN_LENGTH} when longer. */
function visitCut(token: string, visit: (token: string) => void): void {
  if (token.length <= MAX_TOKEN_LENGTH) visit(token);
  else for (let i = 0; i < token.length; i += MAX_TOKEN_LENGTH) visit(token.slice(i, i + MAX_TOKEN_LENGTH));
}

/**
 * Gives `visit` the tokens of `text` under the `standard` tokenizer, in order, lowercased when asked
 * (the `lowercase` filter). A caller that keeps a few of them (matching keeps only the words its
 * saved searches look up) builds no list of them all.
 */
export function eachStandardToken(text: string, lowercased: boolean, visit: (token: string) => void): void {
  const source = lowercased ? lowercase(text) : text;
  const ascii = ASCII_TEXT.test(source);
  // `match` with the global flag returns the words alone: `matchAll` allocated a match object per
  // token, most of what tokenizing a batch of posts allocated (bench/alerts.md).
  for (const match of source.match(ascii ? ASCII_TOKEN : TOKEN) ?? []) {
    if ((ascii ? ASCII_JOINER : HAS_JOINER).test(match))
      for (const piece of splitJoiners(match)) visitCut(piece, visit);
    else visitCut(match, visit);
  }
}

/** The tokens of `text` under the `standard` tokenizer, in order, lowercased when asked (the `lowercase` filter). */
export function standardTokens(text: string, lowercased: boolean): string[] {
  const out: string[] = [];
  eachStandardToken(text, lowercased, (token) => out.push(token));
  return out;
}
