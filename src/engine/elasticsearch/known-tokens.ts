/**
 * Which of a set of words a text holds under the `standard` tokenizer (memory-analysis.ts), found
 * without making a string of every token: matching a post against saved searches needs only the
 * tokens some search looks up (a few hundred words), and most of a post's text is other words.
 *
 * ASCII text is scanned once, character by character, walking a trie of the words as it goes: a
 * token that leaves the trie costs no string, no hash and no set lookup. Around any non-ASCII
 * character the text goes through the tokenizer itself ({@link eachStandardToken}), cut at
 * characters no token can hold, so the two never disagree on where a token ends.
 *
 * Why (bench/alerts.md): tokenizing the posts' text into the searches' words was ~1.1 s of the
 * ~14 s of process time 1,000 saved searches added to a round of 20,000 posts in a CPU profile,
 * most of it the strings and set lookups of tokens no search names.
 */
import { eachStandardToken, MAX_TOKEN_LENGTH } from './memory-analysis.ts';

/** An ASCII character's part in a token: not in one, a word character, or a joiner. */
const BREAK = 0;
const LETTER = 1;
const DIGIT = 2;
/** `.` `'`: between two letters or two digits (MidNumLet). */
const JOINS_BOTH = 3;
/** `:`: between two letters (MidLetter). */
const JOINS_LETTERS = 4;
/** `,` `;`: between two digits (MidNum). */
const JOINS_DIGITS = 5;

/** The part of each ASCII character (`_`, connector punctuation, is a letter as the tokenizer classes it). */
const KIND = new Uint8Array(128);
/** ASCII characters no token holds: the text is cut there when parts of it take the full tokenizer. */
const CUT = new Uint8Array(128).fill(1);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_]/.test(ch)) KIND[c] = LETTER;
  else if (/[0-9]/.test(ch)) KIND[c] = DIGIT;
  else if (ch === '.' || ch === "'") KIND[c] = JOINS_BOTH;
  else if (ch === ':') KIND[c] = JOINS_LETTERS;
  else if (ch === ',' || ch === ';') KIND[c] = JOINS_DIGITS;
  // `#` and `*` start keycap emoji (`#️⃣`) beside non-ASCII characters; alone they break.
  if (KIND[c] !== BREAK || ch === '#' || ch === '*') CUT[c] = 0;
}

/** Whether a joiner of `kind` between characters of `before` and `after` keeps them in one token. */
function joins(kind: number, before: number, after: number): boolean {
  if (before !== after) return false;
  if (kind === JOINS_BOTH) return before === LETTER || before === DIGIT;
  return kind === JOINS_LETTERS ? before === LETTER : before === DIGIT;
}

/** A trie of a vocabulary's ASCII words, over the characters tokens are made of, case folded or not. */
interface AsciiTrie {
  /** A character's index among a node's children (-1: none a token holds). */
  slot: Int8Array;
  slots: number;
  /** `children[node * slots + slot]`: the child node, 0 for none (the root, 0, is no one's child). */
  children: Int32Array;
  /** The word a node spells, when it is one. */
  words: Array<string | undefined>;
}

function asciiTrie(words: ReadonlySet<string>, lowercased: boolean): AsciiTrie {
  const slot = new Int8Array(128).fill(-1);
  let slots = 0;
  for (let c = 0; c < 128; c++) if (KIND[c] !== BREAK && !(lowercased && c >= 65 && c <= 90)) slot[c] = slots++;
  // Lowercased tokens never hold A–Z: those letters walk their lowercase's branch.
  if (lowercased) for (let c = 65; c <= 90; c++) slot[c] = slot[c + 32]!;
  const children: number[] = [];
  const spelled: Array<string | undefined> = [undefined];
  const grow = () => {
    for (let i = 0; i < slots; i++) children.push(0);
  };
  grow();
  for (const word of words) {
    // Words lowercasing could not give, or holding characters ASCII text cannot, are never walked to.
    if (!/^[\x21-\x7e]+$/.test(word) || (lowercased && /[A-Z]/.test(word))) continue;
    let node = 0;
    for (let i = 0; i < word.length && node >= 0; i++) {
      const s = slot[word.charCodeAt(i)]!;
      if (s < 0) node = -1;
      else {
        let child = children[node * slots + s]!;
        if (child === 0) {
          child = spelled.length;
          spelled.push(undefined);
          grow();
          children[node * slots + s] = child;
        }
        node = child;
      }
    }
    if (node > 0) spelled[node] = word;
  }
  return { slot, slots, children: Int32Array.from(children), words: spelled };
}

/** Words looked up in texts ({@link eachKnownToken}): the set, and its tries, made on first use. */
export interface Vocabulary {
  readonly words: ReadonlySet<string>;
  /** The trie for lowercased tokens (`true`) or tokens as written. */
  trie(lowercased: boolean): AsciiTrie;
}

const vocabularies = new WeakMap<ReadonlySet<string>, Vocabulary>();

/** The vocabulary of `words`: the same object for the same set, so its tries are built once. */
export function vocabularyOf(words: ReadonlySet<string>): Vocabulary {
  let vocabulary = vocabularies.get(words);
  if (!vocabulary) {
    const tries: Partial<Record<'lower' | 'exact', AsciiTrie>> = {};
    vocabulary = {
      words,
      trie: (lowercased) => (tries[lowercased ? 'lower' : 'exact'] ??= asciiTrie(words, lowercased)),
    };
    vocabularies.set(words, vocabulary);
  }
  return vocabulary;
}

/**
 * Gives `visit` each token of `text[start, end)` (ASCII characters only, cut where no token runs
 * on) that the trie holds, in order: the tokenizer's rules on ASCII, with the trie walked as the
 * token grows, and tokens cut at {@link MAX_TOKEN_LENGTH} as the tokenizer cuts them.
 */
function scanAscii(text: string, start: number, end: number, trie: AsciiTrie, visit: (word: string) => void): void {
  const { slot, slots, children, words } = trie;
  let inToken = false;
  let node = 0;
  let length = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    const kind = KIND[c]!;
    let extends_ = kind === LETTER || kind === DIGIT;
    if (!extends_ && kind !== BREAK && inToken && i + 1 < end) {
      const next = text.charCodeAt(i + 1);
      extends_ = joins(kind, KIND[text.charCodeAt(i - 1)]!, KIND[next]!);
    }
    if (!extends_) {
      if (inToken && node > 0 && words[node] !== undefined) visit(words[node]!);
      inToken = false;
      continue;
    }
    if (!inToken) {
      inToken = true;
      node = 0;
      length = 0;
    } else if (length === MAX_TOKEN_LENGTH) {
      if (node > 0 && words[node] !== undefined) visit(words[node]!);
      node = 0;
      length = 0;
    }
    length++;
    if (node >= 0) node = children[node * slots + slot[c]!]! || -1;
  }
  if (inToken && node > 0 && words[node] !== undefined) visit(words[node]!);
}

/**
 * Text between two non-ASCII stretches this close together goes through the full tokenizer with
 * them: one call for a stretch of text in another script rather than one per word.
 */
const ASCII_GAP = 32;

/**
 * Gives `visit` each token of `text` under the `standard` tokenizer (lowercased when asked) that
 * `vocabulary` holds, in order, repeats included: the tokens {@link eachStandardToken} gives that
 * are in `vocabulary.words`, the same sequence.
 */
export function eachKnownToken(
  text: string,
  lowercased: boolean,
  vocabulary: Vocabulary,
  visit: (word: string) => void,
): void {
  const trie = vocabulary.trie(lowercased);
  const n = text.length;
  let from = 0;
  while (from < n) {
    let wide = from;
    while (wide < n && text.charCodeAt(wide) < 128) wide++;
    if (wide === n) break;
    // A non-ASCII character: the full tokenizer takes the stretch around it, from the last cut
    // before it to the first cut after the last non-ASCII character within ASCII_GAP of another.
    let cutBefore = wide;
    while (cutBefore > from && !CUT[text.charCodeAt(cutBefore - 1)]) cutBefore--;
    scanAscii(text, from, cutBefore, trie, visit);
    let end = wide;
    let lastWide = wide;
    while (end < n) {
      const c = text.charCodeAt(end);
      if (c >= 128) lastWide = end;
      else if (CUT[c] && end - lastWide > ASCII_GAP) break;
      end++;
    }
    const { words } = vocabulary;
    eachStandardToken(text.slice(cutBefore, end), lowercased, (token) => {
      if (words.has(token)) visit(token);
    });
    from = end;
  }
  if (from < n) scanAscii(text, from, n, trie, visit);
}
