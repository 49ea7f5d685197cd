import { describe, expect, it } from 'vitest';
import * as errors from '../../src/internal/errors.ts';
import * as holders from '../../src/services/keys/holder-service.ts';
import { PROBLEM_CATALOG, problemEntry } from '../../src/internal/problem-catalog.ts';

describe('problem catalog', () => {
  type Concrete = new (detail: string) => errors.DomainError;
  const classes = ([...Object.values(errors), ...Object.values(holders)] as unknown[]).filter(
    (value): value is Concrete =>
      typeof value === 'function' &&
      (value as { prototype?: unknown }).prototype instanceof errors.DomainError &&
      // Abstract classes cannot be constructed.
      value !== errors.DomainError,
  );

  it('lists only problems some error answers: a page for each, and nothing a client never meets', () => {
    const answered = new Set(classes.map((C) => new C('detail').problem));
    expect(answered.size).toBeGreaterThan(10);
    expect(PROBLEM_CATALOG.map((p) => p.name).filter((name) => !answered.has(name))).toEqual([]);
  });

  it('gives each error the status of its catalog entry, and a title and advice to its page', () => {
    for (const C of classes) {
      const error = new C('detail');
      const entry = problemEntry(error.problem)!;
      expect(error.status, error.problem).toBe(entry.status);
      expect(entry.title.length).toBeGreaterThan(3);
      expect(entry.description.length).toBeGreaterThan(20);
    }
  });

  it('is ordered by status then name, and knows no name outside it', () => {
    const order = PROBLEM_CATALOG.map((p) => `${String(p.status).padStart(3, '0')} ${p.name}`);
    expect(order).toEqual([...order].sort());
    expect(problemEntry('no-such-problem')).toBeUndefined();
    expect(problemEntry('toString')).toBeUndefined();
  });
});
