import { describe, expect, it } from 'vitest';
import { IntakeBacklogFullError, ServiceUnavailableError } from '../../src/internal/errors.ts';
import type { IntakeEntry, IntakeResult, IntakeService } from '../../src/services/intake/intake-service.ts';
import { ingestStream } from '../../src/services/intake/stream-ingest.ts';

/** An intake that fails its first calls as `failures` says, then accepts everything it is sent. */
function flakyIntake(failures: Error[]): IntakeService & { accepted: IntakeEntry[]; calls: number } {
  const accepted: IntakeEntry[] = [];
  const service = {
    accepted,
    calls: 0,
    async submit(input: { entries: IntakeEntry[] }): Promise<IntakeResult> {
      service.calls++;
      const failure = failures.shift();
      if (failure) throw failure;
      accepted.push(...input.entries);
      return { accepted: input.entries.length, rejected: [], jobIds: [`job-${service.calls}`] };
    },
    async waitFor() {},
    async settle() {},
  };
  return service;
}

const entries = (n: number): IntakeEntry[] => Array.from({ length: n }, (_, i) => ({ line: i + 1, value: { i } }));
const options = { wait: false, requestId: 'test', waitTimeoutMs: 1000 };

describe('ingestStream', () => {
  it('sends a request again while the queue does not answer, and loses nothing', async () => {
    const intake = flakyIntake([
      new ServiceUnavailableError('The intake queue is unavailable'),
      new ServiceUnavailableError('The intake queue is unavailable'),
    ]);
    const waits: number[] = [];
    const result = await ingestStream(entries(3), intake, { ...options, onUnavailable: (ms) => waits.push(ms) });
    expect(result).toEqual({ accepted: 3, rejected: 0, jobs: 1 });
    expect(intake.accepted.map((e) => e.line)).toEqual([1, 2, 3]);
    expect(waits).toEqual([250, 500]);
  });

  it('gives up on a queue that stays unreachable past its limit, with the queue’s error', async () => {
    const down = Array.from({ length: 20 }, () => new ServiceUnavailableError('The intake queue is unavailable'));
    const intake = flakyIntake(down);
    await expect(ingestStream(entries(2), intake, { ...options, unavailableGiveUpMs: 1000 })).rejects.toBeInstanceOf(
      ServiceUnavailableError,
    );
    expect(intake.accepted).toEqual([]);
    // 250 + 500 ms waited; the next wait (1,000 ms) would pass the limit.
    expect(intake.calls).toBe(3);
  });

  it('waits for a full backlog however long it lasts, and stops on any other error at once', async () => {
    const backlog = flakyIntake([new IntakeBacklogFullError('full'), new IntakeBacklogFullError('full')]);
    const pressured: number[] = [];
    await ingestStream(entries(1), backlog, {
      ...options,
      unavailableGiveUpMs: 1,
      onBackpressure: (ms) => pressured.push(ms),
    });
    expect(pressured).toEqual([250, 500]);
    expect(backlog.accepted).toHaveLength(1);

    const broken = flakyIntake([new Error('a bug')]);
    await expect(ingestStream(entries(1), broken, options)).rejects.toThrow('a bug');
    expect(broken.calls).toBe(1);
  });

  it('with wait, sends every request but the last without a refresh, and the last one only after the rest is done', async () => {
    const calls: string[] = [];
    let n = 0;
    const intake: IntakeService = {
      async submit(input, opts) {
        n++;
        calls.push(`submit ${input.entries.length} refresh=${String(opts.refresh)} wait=${String(opts.wait)}`);
        return { accepted: input.entries.length, rejected: [], jobIds: [`job-${n}`] };
      },
      async waitFor(ids) {
        calls.push(`waitFor ${ids.join(',')}`);
      },
      async settle() {
        calls.push('settle');
      },
    };
    const result = await ingestStream(entries(12_000), intake, { ...options, wait: true });
    expect(result).toEqual({ accepted: 12_000, rejected: 0, jobs: 3 });
    expect(calls).toEqual([
      'submit 5000 refresh=false wait=false',
      'submit 5000 refresh=false wait=false',
      'waitFor job-1,job-2',
      'settle',
      'submit 2000 refresh=all wait=false',
      'waitFor job-3',
    ]);
  });
});
