import { InternalError } from './errors.ts';

/**
 * Replies of Redis commands the driver types as `unknown` (scripts, pipelines, transactions), read
 * as what they are. Each reply is checked (a `typeof`, or one per element), which costs nothing
 * beside the round trip; a reply of another shape is a bug of the script or the call, not data.
 */

/** A reply check: the type guard of one reply shape, and its name for the error. */
export interface ReplyShape<T> {
  readonly name: string;
  is(this: void, value: unknown): value is T;
}

/** An integer reply (INCR, ZREM, a script's number). */
export const NUMBER: ReplyShape<number> = { name: 'a number', is: (v): v is number => typeof v === 'number' };

/** A bulk string reply. */
export const STRING: ReplyShape<string> = { name: 'a string', is: (v): v is string => typeof v === 'string' };

/** An array reply of integers. */
export const NUMBERS: ReplyShape<number[]> = {
  name: 'an array of numbers',
  is: (v): v is number[] => Array.isArray(v) && v.every((x) => typeof x === 'number'),
};

/** An array reply of strings. */
export const STRINGS: ReplyShape<string[]> = {
  name: 'an array of strings',
  is: (v): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string'),
};

/** HGETALL's reply as ioredis gives it: an object of string fields (empty when the key is absent). */
export const HASH: ReplyShape<Record<string, string>> = {
  name: 'a hash',
  is: (v): v is Record<string, string> =>
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string'),
};

/** `value` as the reply `shape` says it is; throws when Redis answered something else. */
export function replyOf<T>(value: unknown, shape: ReplyShape<T>): T {
  if (!shape.is(value)) throw new InternalError(`Redis answered ${describe(value)} where ${shape.name} was expected`);
  return value;
}

/** Every value of a pipeline or transaction (already unwrapped) as the reply `shape` says. */
export function repliesOf<T>(values: readonly unknown[], shape: ReplyShape<T>): T[] {
  return values.map((value) => replyOf(value, shape));
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
