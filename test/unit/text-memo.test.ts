import { describe, expect, it } from 'vitest';
import { textMemo } from '../../src/text/text-memo.ts';

describe('textMemo', () => {
  it('computes a text once while it stays recent', () => {
    const memo = textMemo<number>(100);
    let calls = 0;
    const length = (text: string) => (calls++, text.length);
    expect(memo.get('caption one', length)).toBe(11);
    expect(memo.get('caption one', length)).toBe(11);
    expect(calls).toBe(1);
  });

  it('holds at most two generations of keys: old texts are computed again', () => {
    const memo = textMemo<string>(20);
    const seen: string[] = [];
    const upper = (text: string) => (seen.push(text), text.toUpperCase());
    for (const text of ['aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc', 'dddddddddd', 'eeeeeeeeee']) memo.get(text, upper);
    seen.length = 0;
    // 'aaaaaaaaaa' and 'bbbbbbbbbb' filled the first generation, which two further generations pushed out.
    expect(memo.get('aaaaaaaaaa', upper)).toBe('AAAAAAAAAA');
    expect(memo.get('eeeeeeeeee', upper)).toBe('EEEEEEEEEE');
    expect(seen).toEqual(['aaaaaaaaaa']);
  });

  it('keeps a text used again in the previous generation', () => {
    const memo = textMemo<number>(20);
    let calls = 0;
    const length = (text: string) => (calls++, text.length);
    memo.get('aaaaaaaaaa', length);
    memo.get('bbbbbbbbbb', length);
    memo.get('cccccccccc', length); // a new generation: a and b are now the previous one
    memo.get('aaaaaaaaaa', length); // moved forward
    memo.get('dddddddddd', length);
    memo.get('eeeeeeeeee', length); // another generation: b is dropped, a survives
    calls = 0;
    memo.get('aaaaaaaaaa', length);
    expect(calls).toBe(0);
    memo.get('bbbbbbbbbb', length);
    expect(calls).toBe(1);
  });

  it('serves a reader that does not keep without pushing out what others reuse', () => {
    const memo = textMemo<number>(20);
    let calls = 0;
    const length = (text: string) => (calls++, text.length);
    memo.get('aaaaaaaaaa', length);
    memo.get('bbbbbbbbbb', length);
    // A reader of many old texts: each computed, none stored, so the recent ones stay.
    for (const old of ['cccccccccc', 'dddddddddd', 'eeeeeeeeee', 'ffffffffff']) memo.get(old, length, false);
    expect(memo.get('aaaaaaaaaa', length, false)).toBe(10);
    calls = 0;
    memo.get('aaaaaaaaaa', length);
    memo.get('bbbbbbbbbb', length);
    memo.get('cccccccccc', length);
    expect(calls).toBe(1);
  });

  it("counts the values' size when told to", () => {
    const memo = textMemo<string>(30, (value) => value.length);
    let calls = 0;
    const double = (text: string) => (calls++, text + text);
    memo.get('aaaaa', double); // 15 characters
    memo.get('bbbbb', double); // 30: full
    memo.get('ccccc', double); // a new generation
    memo.get('ddddd', double);
    memo.get('eeeee', double); // another: a and b are gone
    calls = 0;
    memo.get('aaaaa', double);
    expect(calls).toBe(1);
  });
});

describe('textMemo entry bound', () => {
  it('starts a new generation when a generation holds maxEntries entries, whatever their size', () => {
    const memo = textMemo<number>(1_000_000, () => 0, 2);
    let calls = 0;
    const length = (text: string) => (calls++, text.length);
    for (const word of ['a', 'b', 'c', 'd', 'e']) memo.get(word, length);
    calls = 0;
    memo.get('a', length); // two generations of two entries later, 'a' is gone
    memo.get('e', length);
    expect(calls).toBe(1);
  });
});
