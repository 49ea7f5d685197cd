import { InternalError } from '../../../internal/errors.ts';
import { fieldOf } from '../../../internal/typed-objects.ts';
import { VECTOR_DOCUMENT_FIELDS } from '../vectors.ts';
import type { TemplateFile } from './templates.ts';

/**
 * The post-vectors index template as installed. Its file (`post-vectors.index.json`) declares only
 * what is its own (the vectors and the `facts` digest); the facts a vector document copies from its
 * post (VECTOR_DOCUMENT_FIELDS) are mapped exactly as in the posts template, so they are taken from
 * it here rather than written twice, and a change to one of them in posts changes this template
 * (and its content hash) too.
 */
export function postVectorsTemplate(posts: TemplateFile, vectors: TemplateFile): TemplateFile {
  const postFields = fieldOf(posts.template.mappings, 'properties');
  const own = fieldOf(vectors.template.mappings, 'properties');
  const properties: Record<string, unknown> = {};
  for (const field of VECTOR_DOCUMENT_FIELDS) {
    const mapping = fieldOf(postFields, field);
    if (mapping === undefined)
      throw new InternalError(`posts.index.json maps no field "${field}", which a post's vector document copies`);
    if (fieldOf(own, field) !== undefined)
      throw new InternalError(`post-vectors.index.json maps "${field}", which it takes from posts.index.json`);
    properties[field] = structuredClone(mapping);
  }
  const out = structuredClone(vectors);
  out.template.mappings = {
    ...out.template.mappings,
    properties: { ...structuredClone(own instanceof Object ? own : {}), ...properties },
  };
  return out;
}
