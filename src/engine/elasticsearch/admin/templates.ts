import type { Client, estypes } from '@elastic/elasticsearch';
import { errors } from '@elastic/elasticsearch';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InternalError } from '../../../internal/errors.ts';
import { stableStringify } from '../../../internal/stable-json.ts';
import { fieldOf } from '../../../internal/typed-objects.ts';
import { z } from 'zod';
import type { ApplyLine, IndexLayout } from '../../index-admin.ts';
import { translateEngineError } from '../errors.ts';

/** Template files under `index-templates/`, and installing them: what `indices apply` shares. */

/** A template file of `index-templates/`. */
export type TemplateFile = z.infer<typeof TEMPLATE_FILE>;

const TEMPLATE_FILE = z.looseObject({
  version: z.number(),
  priority: z.number().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
  template: z.looseObject({
    settings: z.record(z.string(), z.unknown()).optional(),
    mappings: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** String `key` of an installed object's `_meta` (absent, or not a string: undefined). */
export function metaString(meta: estypes.Metadata | undefined, key: string): string | undefined {
  const value = fieldOf(meta, key);
  return typeof value === 'string' ? value : undefined;
}

/** An engine call's answer, or null when Elasticsearch answers 404 (the object is absent). */
export function nullWhenAbsent<T>(request: Promise<T>): Promise<T | null> {
  return request.catch((error: unknown) => {
    if (error instanceof errors.ResponseError && error.statusCode === 404) return null;
    throw error;
  });
}

/**
 * Like the adapter's engineCall, but an engine refusal keeps Elasticsearch's reason: these are
 * operator commands, and "failed to find tokenizer [x]" is what an operator needs to read.
 */
export async function adminCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof errors.ResponseError && (error.statusCode ?? 500) < 500) {
      const cause = fieldOf(error.body, 'error');
      const type = fieldOf(cause, 'type');
      const reason = fieldOf(cause, 'reason');
      throw new InternalError(
        `Elasticsearch refused: ${typeof type === 'string' ? type : 'error'}: ${typeof reason === 'string' ? reason : error.message}`,
        { cause: error },
      );
    }
    throw translateEngineError(error);
  }
}

/** A short hash of a JSON value, independent of key order: what templates carry to say which content they hold. */
export function hashOf(value: unknown): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex').slice(0, 16);
}

/**
 * The shared-settings component with the deployment's shard and replica counts and refresh
 * interval in place of the file's. With the file's own values (1, 0 and 1s, the defaults) it is
 * the file unchanged, so its hashes, and therefore what `apply` and `status` report, stay those
 * of a single-node install.
 */
export function withLayout(component: TemplateFile, layout: Partial<IndexLayout>): TemplateFile {
  const out = structuredClone(component);
  const settings = (out.template.settings ??= {});
  if (layout.shards !== undefined) settings.number_of_shards = layout.shards;
  if (layout.replicas !== undefined) settings.number_of_replicas = layout.replicas;
  if (layout.refreshInterval !== undefined) settings.refresh_interval = layout.refreshInterval;
  return out;
}

/** Reads a template file of `dir`. */
export function readTemplate(dir: string, file: string): TemplateFile {
  return TEMPLATE_FILE.parse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
}

/**
 * Installs index template `name` unless the installed one carries the same content hash (in its
 * `_meta`). `rebuildHint` says what an update means for indices built from the old one.
 */
export async function putIndexTemplateIfChanged(
  client: Client,
  name: string,
  body: Omit<estypes.IndicesPutIndexTemplateRequest, 'name'>,
  hash: string,
  options: { rebuildHint?: string } = {},
): Promise<ApplyLine> {
  const existing = await adminCall(() => nullWhenAbsent(client.indices.getIndexTemplate({ name })));
  const installed = existing?.index_templates[0]?.index_template;
  const installedHash = metaString(installed?._meta, 'content_hash');
  const object = `index template ${name}`;
  if (installedHash === hash) return { object, action: 'unchanged' };
  await adminCall(() => client.indices.putIndexTemplate({ name, ...body }));
  return installed
    ? {
        object,
        action: 'updated',
        detail: `was ${installedHash ?? 'unmanaged'}, now ${hash}${options.rebuildHint ? `; ${options.rebuildHint}` : ''}`,
      }
    : { object, action: 'created' };
}

/** Dotted paths of every field a mapping's `properties` declare (sub-fields included). */
export function fieldPaths(properties: unknown, prefix = ''): string[] {
  if (typeof properties !== 'object' || properties === null) return [];
  return Object.entries(properties).flatMap(([name, field]: [string, unknown]) => [
    prefix + name,
    ...fieldPaths(fieldOf(field, 'properties'), `${prefix}${name}.`),
    ...fieldPaths(fieldOf(field, 'fields'), `${prefix}${name}.`),
  ]);
}
