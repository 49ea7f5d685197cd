import { describe, expect, it } from 'vitest';
import * as errors from '../../src/internal/errors.ts';
import { PROBLEM_CATALOG } from '../../src/http/problem-catalog.ts';

describe('problem catalog', () => {
  it('has an entry, with the same status, for every problem the service can answer', () => {
    type Concrete = new (detail: string) => errors.DomainError;
    const classes = (Object.values(errors) as unknown[]).filter(
      (value): value is Concrete => typeof value === 'function' && value.prototype instanceof errors.DomainError,
    );
    expect(classes.length).toBeGreaterThan(10);
    const answered = classes.map((C) => new C('detail')).map((e) => ({ name: e.problem, status: e.status }));
    const catalogued = PROBLEM_CATALOG.map((p) => ({ name: p.name, status: p.status }));
    expect(catalogued).toEqual(expect.arrayContaining(answered));
    // And nothing in the catalog that nothing answers.
    expect(answered).toEqual(expect.arrayContaining(catalogued));
  });
});
