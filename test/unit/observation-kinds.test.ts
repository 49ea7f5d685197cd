import { describe, expect, it } from 'vitest';
import { parseObservation } from '../../src/contract/observations.ts';

describe('parseObservation: the kind', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'rejects %s, a name every object inherits, as an unknown kind',
    (kind) => {
      const parsed = parseObservation({ kind, observed_at: '2026-11-01T00:00:00Z' });
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.detail).toMatch(/^\/kind: expected one of "/);
    },
  );

  it('rejects a missing kind the same way', () => {
    const parsed = parseObservation({ observed_at: '2026-11-01T00:00:00Z' });
    expect(parsed).toMatchObject({ ok: false, detail: expect.stringMatching(/^\/kind: expected one of "/) });
  });
});
