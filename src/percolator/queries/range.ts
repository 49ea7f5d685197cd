import type { estypes } from '@elastic/elasticsearch';
import { fieldOf, NO_TEXT, single, unsupported, type MemoryQuery } from '../compiled.ts';
import type { FieldTable } from '../document.ts';

const OPTIONS = new Set(['gt', 'gte', 'lt', 'lte', 'boost', '_name']);

/**
 * `range` on a number or date field: any value within every bound given. Dates are compared as
 * instants; date math (`now-7d`, `||/d`), formats and time zones are refused, since the filter
 * grammar sends ISO 8601 instants only.
 */
export function compileRange(
  body: Partial<Record<string, estypes.QueryDslRangeQuery>>,
  fields: FieldTable,
): MemoryQuery {
  const [path, spec] = single(body, 'range');
  if (spec === null || typeof spec !== 'object') return unsupported(`a range on ${path} without bounds`);
  const field = fieldOf(fields, path);
  if (field.kind !== 'number' && field.kind !== 'date') unsupported(`a range on the ${field.kind} field ${path}`);
  for (const key of Object.keys(spec)) if (!OPTIONS.has(key)) unsupported(`the range option ${key}`);
  const asNumber = (v: unknown): number => {
    if (field.kind === 'number') return Number(v);
    if (typeof v === 'number') return v;
    const ms = Date.parse(String(v));
    if (Number.isNaN(ms) || /now|\|\|/.test(String(v))) unsupported(`the date ${String(v)}`);
    return ms;
  };
  const bound = (op: string) => {
    const value: unknown = Reflect.get(spec, op);
    return value === undefined || value === null ? undefined : asNumber(value);
  };
  const [gt, gte, lt, lte] = [bound('gt'), bound('gte'), bound('lt'), bound('lte')];
  return {
    matches: (doc) =>
      doc.values(path).some((raw) => {
        const v = field.kind === 'number' ? Number(raw) : typeof raw === 'number' ? raw : Date.parse(String(raw));
        if (Number.isNaN(v)) return false;
        return (
          (gt === undefined || v > gt) &&
          (gte === undefined || v >= gte) &&
          (lt === undefined || v < lt) &&
          (lte === undefined || v <= lte)
        );
      }),
    triggers: null,
    text: NO_TEXT,
  };
}
