import { z } from 'zod';
import { HISTORY_INTERVALS, type HistoryInterval } from '../contract/api.ts';
import { utcTimestamp } from '../contract/observations.ts';
import { ValidationFailedError } from '../internal/errors.ts';

/** Days of history a request without `from` asks for. */
export const DEFAULT_HISTORY_DAYS = 90;
/** Points one history request may read; a longer history is refused (422), not cut. */
export const MAX_HISTORY_POINTS = 20_000;

/** The query of `GET …/{id}/history`, as given (defaults are resolved against the clock later). */
export const historyQuerySchema = z.strictObject({
  from: utcTimestamp.optional().meta({
    description: `Start of the range (inclusive), ISO 8601 UTC; default: ${DEFAULT_HISTORY_DAYS} days before \`to\`.`,
  }),
  to: utcTimestamp.optional().meta({ description: 'End of the range (inclusive), ISO 8601 UTC; default: now.' }),
  interval: z
    .enum(HISTORY_INTERVALS, {
      error: `expected one of ${HISTORY_INTERVALS.join(', ')}`,
    })
    .default('day')
    .meta({
      description:
        '`raw`: every observation; `day` (default) or `week` (ISO weeks, from Monday, UTC): the last observation of each, each counter at its last observed value.',
    }),
});

export type HistoryQueryInput = z.output<typeof historyQuerySchema>;

/** A history request with its range resolved. */
export interface HistoryQuery {
  from: string;
  to: string;
  interval: HistoryInterval;
}

/**
 * Resolves the range's defaults at `now` (`to`: now; `from`: 90 days before `to`).
 *
 * @throws ValidationFailedError when `from` is after `to`.
 */
export function resolveHistoryQuery(input: HistoryQueryInput, now: Date): HistoryQuery {
  const to = input.to ?? now.toISOString();
  const from = input.from ?? new Date(Date.parse(to) - DEFAULT_HISTORY_DAYS * 24 * 60 * 60 * 1000).toISOString();
  if (from > to) throw new ValidationFailedError(`query parameter /from: expected a time no later than to (${to})`);
  return { from, to, interval: input.interval };
}

/** The 422 of a range that holds more points than one request reads. */
export function tooManyPoints(): ValidationFailedError {
  return new ValidationFailedError(
    `query parameter /from: this range holds more than ${MAX_HISTORY_POINTS} observations; ask for a shorter range`,
  );
}
