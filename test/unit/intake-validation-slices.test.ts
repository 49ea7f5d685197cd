import { describe, expect, it } from 'vitest';
import { generateObservations } from '../../src/seed/generator.ts';
import { validateEntries, type IntakeEntry } from '../../src/services/intake/intake-service.ts';

/** A full request's worth of seed observations, as parsed JSON lines, with one broken line in it. */
function request(): IntakeEntry[] {
  const entries: IntakeEntry[] = [];
  for (const value of generateObservations({ posts: 1200, accounts: 120, seed: 5 })) {
    entries.push({ line: entries.length + 1, value: JSON.parse(JSON.stringify(value)) as unknown });
    if (entries.length === 1000) break;
  }
  entries[500] = { line: 501, value: { kind: 'post', platform: 'instagram' } };
  return entries;
}

describe('validateEntries', () => {
  it('lets other requests run while it checks a large request, and still answers every line', async () => {
    const entries = request();
    // A request arriving meanwhile is a turn of the event loop (setImmediate): it must come before
    // the last observation is checked, not after the whole request.
    let turns = 0;
    const ticker = (): void => {
      turns++;
      if (!done) setImmediate(ticker);
    };
    let done = false;
    setImmediate(ticker);
    const result = await validateEntries(entries, [{ line: 1001, detail: 'not valid JSON' }]);
    done = true;
    const turnsWhileChecking = turns;

    expect(turnsWhileChecking).toBeGreaterThan(0);
    expect(result.accepted).toHaveLength(999);
    expect(result.rejected.map((r) => r.line)).toEqual([501, 1001]);
  });
});
