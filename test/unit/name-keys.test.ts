import { describe, expect, it } from 'vitest';
import { foldName, nameKeys } from '../../src/text/name-keys.ts';
import { lookupCost } from '../../src/query/lookup-request.ts';

describe('foldName', () => {
  it('folds case, accents and compatibility forms in any script, as the worker folds names', () => {
    expect(['Zoë', 'ZOË', 'zoe', 'Ｚｏｅ'].map(foldName)).toEqual(['zoe', 'zoe', 'zoe', 'zoe']);
    expect(foldName('Søren Łódź straße')).toBe('soren lodz strasse');
    expect(foldName('İstanbul')).toBe('istanbul');
    expect(foldName('Ελένη')).toBe('ελενη');
    // Voicing marks are letters of Japanese words: が stays が; half-width kana become full width.
    expect(foldName('がｶﾞ')).toBe('がガ');
  });
});

describe('nameKeys', () => {
  it('keys a name by its whole and from each later word', () => {
    expect(nameKeys('Zoë Martin')).toEqual(['zoe martin', 'martin']);
    expect(nameKeys('Chiara | Produzione musicale')).toEqual([
      'chiara | produzione musicale',
      'produzione musicale',
      'musicale',
    ]);
    expect(nameKeys('   ')).toEqual([]);
  });
});

describe('lookupCost', () => {
  it('spends one read per entry sent, at least one and at most 1,000', () => {
    expect(lookupCost({ handles: ['a', 'b'], ids: ['c'] })).toBe(3);
    expect(lookupCost({})).toBe(1);
    expect(lookupCost('not an object')).toBe(1);
    expect(lookupCost({ handles: Array.from({ length: 5000 }, () => 'x') })).toBe(1000);
  });
});
