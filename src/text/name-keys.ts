/**
 * Names as typeahead matches them: case- and accent-insensitive in any script. This engine build
 * has no `asciifolding` or `icu_folding` filter (no analysis-common), so the service folds both
 * sides itself: the worker writes folded keys into the projections, and the query is folded the
 * same way before it reaches the engine (as a literal prefix, never query syntax).
 */

/**
 * Latin letters that Unicode does not decompose into a base and a mark but that Lucene's
 * ASCII folding maps, so that "Søren", "Łódź" and "straße" find "soren", "lodz" and "strasse".
 */
const SPECIAL: Readonly<Record<string, string>> = {
  ß: 'ss',
  ẞ: 'ss',
  æ: 'ae',
  Æ: 'ae',
  œ: 'oe',
  Œ: 'oe',
  ø: 'o',
  Ø: 'o',
  ł: 'l',
  Ł: 'l',
  đ: 'd',
  Đ: 'd',
  ð: 'd',
  Ð: 'd',
  þ: 'th',
  Þ: 'th',
  ı: 'i',
};
const SPECIAL_RE = new RegExp(`[${Object.keys(SPECIAL).join('')}]`, 'gu');

/**
 * The combining diacritics (accents, cedillas, umlauts, tildes, rings) of the Latin, Greek and
 * Cyrillic scripts and their extended and supplementary blocks. Other combining marks stay:
 * Japanese voicing marks (が is not か), Indic and Thai vowel signs are letters of their words.
 */
const DIACRITIC_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x0300, 0x036f],
  [0x1ab0, 0x1aff],
  [0x1dc0, 0x1dff],
  [0x20d0, 0x20ff],
  [0xfe20, 0xfe2f],
];
const isDiacritic = (ch: string) => {
  const cp = ch.codePointAt(0)!;
  return DIACRITIC_RANGES.some(([from, to]) => cp >= from && cp <= to);
};
/** Nonspacing marks: the candidates, of which only {@link isDiacritic} ones are dropped. */
const NONSPACING = /\p{Mn}/gu;

/**
 * The folded form of a name: compatibility forms unified (full-width `Ｚｏｅ`, half-width kana),
 * diacritics dropped, lower-cased one code point at a time (as the engine's `lowercase` does,
 * without context rules), whitespace runs as one space, trimmed.
 */
export function foldName(value: string): string {
  const stripped = value
    .normalize('NFKD')
    .replace(NONSPACING, (mark) => (isDiacritic(mark) ? '' : mark))
    .normalize('NFC')
    .replace(SPECIAL_RE, (ch) => SPECIAL[ch]!);
  let out = '';
  // The first code point of a multi-character mapping is the simple mapping (`İ` → `i`).
  for (const ch of stripped) out += [...ch.toLowerCase()][0]!;
  return out.replace(/\s+/gu, ' ').trim();
}

/** Where a word starts inside a name: after a space or punctuation, before a letter or digit. */
const WORD_START = /(?<=^|[^\p{L}\p{M}\p{N}])[\p{L}\p{N}]/gu;

/**
 * The folded keys a name is found by: the whole name, and the name from each later word on, so
 * that "martin" finds "Zoë Martin" as "zoe" does. At most `maxKeys` keys (a long name's tail words
 * add little), each at most `maxLength` characters (a prefix longer than that cannot be typed
 * into a search box anyway; the query is cut the same way).
 */
export function nameKeys(name: string, maxKeys = 8, maxLength = NAME_KEY_MAX_LENGTH): string[] {
  const folded = foldName(name);
  if (folded === '') return [];
  const keys = new Set<string>();
  for (const match of folded.matchAll(WORD_START)) {
    keys.add(folded.slice(match.index).slice(0, maxLength));
    if (keys.size >= maxKeys) break;
  }
  keys.add(folded.slice(0, maxLength));
  return [...keys];
}

/** The longest key kept, in UTF-16 code units; a longer prefix is matched on its first this many. */
export const NAME_KEY_MAX_LENGTH = 64;
