/** A lookup's answer (the route adds `request_id`). */
export interface LookupResult<T> {
  data: T[];
  not_found: string[];
}

/**
 * The found records in the order asked, each once (an account asked by handle and by ID, or twice,
 * is answered at its first place), and the entries that found none the GET would serve, each
 * distinct entry once, as sent.
 */
export function renderLookup<R extends { id: string }, T>(
  asked: ReadonlyArray<{ entry: string; record: R | null | undefined }>,
  servable: (record: R | null) => boolean,
  render: (record: R) => T,
): LookupResult<T> {
  const data: T[] = [];
  const notFound = new Set<string>();
  const seen = new Set<string>();
  for (const { entry, record } of asked) {
    if (!record || !servable(record)) {
      notFound.add(entry);
      continue;
    }
    if (seen.has(record.id)) continue;
    seen.add(record.id);
    data.push(render(record));
  }
  return { data, not_found: [...notFound] };
}
