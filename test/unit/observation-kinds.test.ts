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

describe('parseObservation: the status', () => {
  it.each([
    ['post', undefined, '/status: expected one of "available", "unavailable"'],
    ['post', 'gone', '/status: expected one of "available", "unavailable"'],
    ['account', 'suspended', '/status: expected one of "active", "deactivated", "deleted", "unobservable"'],
  ])('names the statuses a %s may have when it has %s', (kind, status, detail) => {
    const parsed = parseObservation({ kind, platform_id: 'p1', observed_at: '2026-11-01T00:00:00Z', status });
    expect(parsed).toEqual({ ok: false, detail });
  });
});
