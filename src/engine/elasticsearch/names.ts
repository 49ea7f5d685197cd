import type { StoredIndexName } from '../index-admin.ts';

/** Names of one logical index's aliases, template and concrete-index pattern. */
export interface IndexNames {
  /** Read alias: every search and read goes through it. */
  read: string;
  /** Write alias (`is_write_index`): every write goes through it. */
  write: string;
  /** Index template name. */
  template: string;
  /** Concrete indices are `${concretePrefix}${version}-${timestamp}`. */
  concretePrefix: string;
}

/** Names derived from INDEX_PREFIX, of a logical index or a companion (`post-vectors`). */
export function indexNames(prefix: string, name: StoredIndexName): IndexNames {
  return {
    read: `${prefix}-${name}`,
    write: `${prefix}-${name}-write`,
    template: `${prefix}-${name}`,
    concretePrefix: `${prefix}-${name}-v`,
  };
}

/** Names of the posts' vector index (`<prefix>-post-vectors`, `<prefix>-post-vectors-write`, …). */
export function postVectorNames(prefix: string): IndexNames {
  return indexNames(prefix, 'post-vectors');
}

/** Name of the shared-settings component template. */
export function componentTemplateName(prefix: string): string {
  return `${prefix}-shared-settings`;
}

/** A new concrete index name for template version `version`. */
export function concreteIndexName(names: IndexNames, version: number, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:TZ.]/g, '')
    .slice(0, 17);
  return `${names.concretePrefix}${version}-${stamp}`;
}
