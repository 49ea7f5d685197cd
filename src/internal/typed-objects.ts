/**
 * `Object.keys`, `Object.entries` and `in` typed by the object's keys. TypeScript types them by
 * `string` because an object may hold keys beyond its type's; the tables these are used on are
 * literals declared in this codebase, so their keys are exactly their type's. The casts live here,
 * once, instead of at every table.
 */

/** The keys of a table declared in this codebase. */
export function keysOf<K extends string>(table: Readonly<Partial<Record<K, unknown>>>): K[] {
  // Object.keys answers string[]: a literal table's keys are exactly K.
  return Object.keys(table) as K[];
}

/** The entries of a table declared in this codebase (absent optional keys are skipped). */
export function entriesOf<K extends string, V>(table: Readonly<Partial<Record<K, V>>>): Array<[K, V]> {
  // Object.entries answers [string, V][]: a literal table's keys are exactly K.
  return Object.entries(table) as Array<[K, V]>;
}

/** True when `key` is an own key of `table` (unlike `in`, never an inherited one such as `constructor`). */
export function isKeyOf<T extends object>(table: T, key: PropertyKey): key is keyof T {
  return Object.hasOwn(table, key);
}

/** Field `key` of `value` when it is an object (an error, a parsed body), as the unknown it is. */
export function fieldOf(value: unknown, key: string): unknown {
  return value instanceof Object ? Reflect.get(value, key) : undefined;
}
