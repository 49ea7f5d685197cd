import { ALWAYS, NEVER, type MemoryQuery } from '../compiled.ts';

/** `match_all`: every document. */
export const compileMatchAll = (): MemoryQuery => ALWAYS;

/** `match_none`: no document. */
export const compileMatchNone = (): MemoryQuery => NEVER;
