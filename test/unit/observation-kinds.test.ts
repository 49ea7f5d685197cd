import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatIssues, parseObservation } from '../../src/contract/observations.ts';

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

describe('formatIssues: a field the input lacks', () => {
  const schema = z.strictObject({
    name: z.string({ error: 'expected a string' }),
    post: z.strictObject({ query: z.string({ error: 'expected a string' }) }, { error: 'expected a JSON object' }),
    order: z.enum(['asc', 'desc'], { error: 'expected "asc" or "desc"' }).optional(),
    by: z.enum(['likes', 'views'], { error: 'expected likes or views' }),
  });
  const detail = (input: unknown) => formatIssues(schema.safeParse(input).error?.issues ?? [], '', input);

  it('says required before what the field takes', () => {
    expect(detail({})).toBe(
      '/name: required, expected a string; /post: required, expected a JSON object; /by: required, expected likes or views',
    );
    expect(detail({ name: 'x', post: {}, by: 'likes' })).toBe('/post/query: required, expected a string');
  });

  it('leaves a wrong value, null included, as the schema words it', () => {
    expect(detail({ name: null, post: { query: 5 }, by: 'date', order: 'up' })).toBe(
      '/name, /post/query: expected a string; /order: expected "asc" or "desc"; /by: expected likes or views',
    );
  });
});
