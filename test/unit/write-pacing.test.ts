import { describe, expect, it } from 'vitest';
import { createPacingController, type PacingController } from '../../src/internal/write-pacing.ts';

/** Feeds the controller one interval a second: `queries` searches averaging `meanMs` each. */
function feeder(controller: PacingController) {
  let at = 0;
  const totals = { queries: 0, millis: 0 };
  controller.observe(at, { ...totals });
  return (queries: number, meanMs: number) => {
    at += 1000;
    totals.queries += queries;
    totals.millis += queries * meanMs;
    controller.observe(at, { ...totals });
    return controller.factor();
  };
}

describe('write pacing (searches first)', () => {
  it('writes at full speed while the searches run at their usual pace', () => {
    const pacing = createPacingController();
    const interval = feeder(pacing);
    for (let i = 0; i < 10; i++) interval(30, 8 + (i % 3));
    expect(pacing.factor()).toBe(0);
    expect(pacing.pauseAfter(120)).toBe(0);
  });

  it('pauses the writes while searches take over twice their recent best, up to twice a request', () => {
    const pacing = createPacingController();
    const interval = feeder(pacing);
    for (let i = 0; i < 5; i++) interval(30, 8);
    // The intake starts: searches at three times their idle time.
    expect(interval(30, 24)).toBe(0.5);
    expect(pacing.pauseAfter(100)).toBe(50);
    expect(interval(30, 24)).toBe(1);
    expect(interval(30, 24)).toBe(2);
    expect(interval(30, 24)).toBe(2);
    expect(pacing.pauseAfter(100)).toBe(200);
  });

  it('holds the pause between the two thresholds and lets it go once searches are fast again', () => {
    const pacing = createPacingController();
    const interval = feeder(pacing);
    interval(30, 8);
    interval(30, 24);
    interval(30, 24);
    expect(pacing.factor()).toBe(1);
    // 1.75× the best: neither slow nor fast, the pause stays.
    expect(interval(30, 14)).toBe(1);
    expect(interval(30, 10)).toBe(0.5);
    expect(interval(30, 10)).toBe(0.25);
    expect(interval(30, 10)).toBe(0);
  });

  it('does not pause when nobody searches (or too few to judge)', () => {
    const pacing = createPacingController();
    const interval = feeder(pacing);
    interval(30, 8);
    interval(30, 30);
    expect(pacing.factor()).toBeGreaterThan(0);
    expect(interval(3, 500)).toBe(0);
    expect(interval(0, 0)).toBe(0);
  });

  it('forgets a best interval older than its window', () => {
    const pacing = createPacingController({ windowMs: 5000 });
    const interval = feeder(pacing);
    interval(30, 4);
    // 12 ms is three times the old best while it is remembered (5 s), then the norm.
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(() => interval(30, 12))).toEqual([0.5, 1, 2, 2, 2, 1, 0.5, 0.25, 0]);
  });

  it('starts over when the totals go back (a node restarted)', () => {
    const pacing = createPacingController();
    pacing.observe(1000, { queries: 1000, millis: 8000 });
    pacing.observe(2000, { queries: 1030, millis: 8240 });
    pacing.observe(3000, { queries: 1060, millis: 9200 });
    expect(pacing.factor()).toBe(0.5);
    pacing.observe(4000, { queries: 10, millis: 80 });
    expect(pacing.factor()).toBe(0);
  });
});
