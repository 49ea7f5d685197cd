import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { utcTimestamp } from '../../src/contract/observations.ts';

/** The pattern clients and fuzzers see in the OpenAPI document. */
const published = new RegExp((z.toJSONSchema(utcTimestamp, { io: 'input' }) as { pattern: string }).pattern);

function isRealDay(year: number, month: number, day: number): boolean {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

describe('utcTimestamp', () => {
  it('publishes a pattern that accepts exactly the calendar days the service accepts', () => {
    const mismatches: string[] = [];
    for (const year of [1000, 1200, 1900, 2000, 2023, 2024, 2100, 2400, 9999]) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const value = `${pad(year, 4)}-${pad(month)}-${pad(day)}T12:00:00Z`;
          const accepted = utcTimestamp.safeParse(value).success;
          const real = month >= 1 && month <= 12 && isRealDay(year, month, day);
          if (accepted !== real || published.test(value) !== real) mismatches.push(value);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('normalizes to millisecond Z form', () => {
    expect(utcTimestamp.parse('2024-02-29T01:02:03.4567+00:00')).toBe('2024-02-29T01:02:03.456Z');
    expect(utcTimestamp.parse('1000-03-31T23:59Z')).toBe('1000-03-31T23:59:00.000Z');
  });

  it('normalizes every form of an instant to what Date prints for it', () => {
    const forms = (day: string, time: string) => [
      `${day}T${time.slice(0, 5)}Z`,
      `${day}T${time}Z`,
      `${day}T${time}+00:00`,
      `${day}T${time}-00:00`,
      `${day}T${time}.5Z`,
      `${day}T${time}.05+00:00`,
      `${day}T${time}.999999999Z`,
      `${day}T${time}.1234Z`,
    ];
    const differ: string[] = [];
    for (const day of [
      '1000-01-01',
      '1582-10-10',
      '1999-12-31',
      '2000-02-29',
      '2024-02-29',
      '2100-02-28',
      '9999-12-31',
    ])
      for (const time of ['00:00:00', '09:05:07', '12:30:59', '23:59:59'])
        for (const value of forms(day, time)) {
          // The reference: Date's own reading of the instant, its fraction cut to milliseconds.
          const [, fraction = ''] = /\.(\d+)/.exec(value) ?? [];
          const cut = value.replace(/\.\d+/, fraction ? `.${(fraction + '000').slice(0, 3)}` : '');
          const expected = new Date(cut.replace(/[+-]00:00$/, 'Z')).toISOString();
          if (utcTimestamp.parse(value) !== expected) differ.push(value);
        }
    expect(differ).toEqual([]);
  });

  it('takes the years 1000 to 9999 only, in the pattern too (dates derived from one stay four-digit)', () => {
    for (const value of ['0000-01-01T00:00Z', '0999-12-31T23:59:59Z', '0042-03-31T00:00Z']) {
      expect(utcTimestamp.safeParse(value).error?.issues[0]?.message).toBe(
        `expected a year from 1000 to 9999: ${value}`,
      );
      expect(published.test(value)).toBe(false);
    }
  });

  it('tells a malformed value from an impossible one', () => {
    const message = (value: string) => utcTimestamp.safeParse(value).error?.issues[0]?.message;
    expect(message('2026-02-30T00:00:00Z')).toBe('not a real date and time: 2026-02-30T00:00:00Z');
    expect(message('2026-01-31T24:00Z')).toBe('not a real date and time: 2026-01-31T24:00Z');
    expect(message('yesterday')).toBe('expected an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00Z');
    expect(message('2026-01-31T12:00:00+01:00')).toBe(
      'expected an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00Z',
    );
  });
});
