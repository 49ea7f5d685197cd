import { fieldOf } from './typed-objects.ts';

/**
 * JSON with object keys sorted at every depth, so equal values always serialize identically
 * (used to detect no-op merges and to break timestamp ties deterministically).
 */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = fieldOf(v, k);
    return sorted;
  });
}
