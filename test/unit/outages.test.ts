import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../src/internal/errors.ts';
import { createOutageLog, isConnectionError, reasonOf } from '../../src/internal/outages.ts';

/** A logger that keeps what it was told. */
function recorder() {
  const lines: Array<{ level: string; fields: object; message: string }> = [];
  return {
    lines,
    warn: (fields: object, message: string) => lines.push({ level: 'warn', fields, message }),
    info: (fields: object, message: string) => lines.push({ level: 'info', fields, message }),
  };
}

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

describe('outage log', () => {
  it('says once when an outage starts and once when it ends, however many errors come between', () => {
    const log = recorder();
    let now = 1_000;
    const outage = createOutageLog('Redis', log, () => now);
    for (let i = 0; i < 50; i++) outage.down(refused);
    expect(outage.isDown).toBe(true);
    now += 12_300;
    outage.up();
    outage.up();
    expect(log.lines).toEqual([
      {
        level: 'warn',
        fields: { dependency: 'Redis', reason: 'connect ECONNREFUSED 127.0.0.1:6379' },
        message: 'Redis unreachable; retrying until it is back',
      },
      {
        level: 'info',
        fields: { dependency: 'Redis', down_seconds: 12.3 },
        message: 'Redis reachable again after 12.3 s',
      },
    ]);
  });

  it('treats several connections of one purpose as one: down with the first, back with the last', () => {
    const log = recorder();
    const outage = createOutageLog('Redis (queue worker)', log);
    const [main, blocking, closed] = [{}, {}, {}];
    outage.down(refused, main);
    outage.down(refused, blocking);
    outage.down(refused, closed);
    outage.up(main);
    // A connection closed on purpose leaves without a recovery line.
    outage.leave(closed);
    expect(log.lines.map((l) => l.level)).toEqual(['warn']);
    outage.up(blocking);
    expect(log.lines.map((l) => l.level)).toEqual(['warn', 'info']);
    // A connection that was never down does not announce a recovery.
    outage.up(main);
    expect(log.lines).toHaveLength(2);
  });
});

describe('isConnectionError', () => {
  it('recognizes a connection that is down, directly or wrapped', () => {
    expect(isConnectionError(refused)).toBe(true);
    expect(isConnectionError(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(true);
    expect(isConnectionError(new Error('Connection is closed.'))).toBe(true);
    expect(isConnectionError(new ServiceUnavailableError('the key store is unreachable', { cause: refused }))).toBe(
      true,
    );
  });

  it('leaves bugs and refused commands alone', () => {
    expect(isConnectionError(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isConnectionError(Object.assign(new Error('ERR unknown command'), { name: 'ReplyError' }))).toBe(false);
    expect(isConnectionError('ECONNREFUSED')).toBe(false);
  });
});

describe('reasonOf', () => {
  it('gives the message and its cause on one line, never a stack', () => {
    expect(reasonOf(new ServiceUnavailableError('The search engine is unavailable.', { cause: refused }))).toBe(
      'The search engine is unavailable. (connect ECONNREFUSED 127.0.0.1:6379)',
    );
    expect(reasonOf(refused)).toBe('connect ECONNREFUSED 127.0.0.1:6379');
  });
});
