import type { Client } from '@elastic/elasticsearch';
import { z } from 'zod';
import { fieldOf } from '../../../internal/typed-objects.ts';
import { refreshAll } from '../errors.ts';
import {
  adminCall as engineCall,
  hashOf,
  nullWhenAbsent,
  putIndexTemplateIfChanged,
  readTemplate,
  withLayout,
  type TemplateFile,
  fieldPaths,
  metaString,
} from './templates.ts';
import {
  INDEX_NAMES,
  type ApplyLine,
  type IndexAdmin,
  type IndexLayout,
  type IndexName,
  type IndexStatus,
  type ShardCopy,
} from '../../index-admin.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { componentTemplateName, concreteIndexName, indexNames } from '../names.ts';
import { createHistoryAdmin } from './history-admin.ts';
import { copyRecords, liveSettings, shardAllocation, type LiveSettings } from './index-inspection.ts';
import { metricHistoryNames } from '../documents/metric-history.ts';
import { projectAccount, projectPost } from '../documents/projection.ts';
import type { AccountRecord, PostRecord } from '../../../domain/records.ts';

/** The layout settings the component template file must declare (withLayout may override them). */
const COMPONENT_LAYOUT = z.object({
  number_of_shards: z.number(),
  number_of_replicas: z.number(),
  refresh_interval: z.string(),
});

/** Creates the index admin for INDEX_PREFIX, reading templates from `templatesDir`. */
export function createIndexAdmin(deps: {
  client: Client;
  indexPrefix: string;
  templatesDir: string;
  /** Advanced after an alias swap: search nodes must stop serving first pages from the old index. */
  visibility: VisibilityEpoch;
  /** Shard and replica counts (INDEX_SHARDS, INDEX_REPLICAS); absent: the template file's. */
  layout?: Partial<IndexLayout>;
  /** Days of metric history kept (METRIC_HISTORY_RETENTION_DAYS). */
  historyRetentionDays?: number;
}): IndexAdmin {
  const { client, indexPrefix } = deps;
  const read = (file: string): TemplateFile => readTemplate(deps.templatesDir, file);
  const file = read('shared-settings.component.json');
  const component = withLayout(file, deps.layout ?? {});
  const layout = COMPONENT_LAYOUT.parse(component.template.settings);
  // What shapes an index: the shard count does (only a rebuild changes it), the replica count and
  // the refresh interval do not (apply sets them on live indices), so they are left out of the
  // hash that says "rebuild needed".
  const shape = withLayout(file, { shards: layout.number_of_shards });
  const componentName = componentTemplateName(indexPrefix);
  const historyNames = metricHistoryNames(indexPrefix);
  const history = createHistoryAdmin({
    client,
    names: historyNames,
    file: read('metrics.index.json'),
    layout: { shards: layout.number_of_shards, replicas: layout.number_of_replicas },
  });
  const retentionDays = deps.historyRetentionDays ?? 400;

  /** The index template body as installed, with the hash of everything that shapes the index. */
  function desiredIndexTemplate(name: IndexName) {
    const file = read(`${name}.index.json`);
    const names = indexNames(indexPrefix, name);
    const hash = hashOf({ component: shape.template, index: file.template, version: file.version });
    const template = structuredClone(file.template);
    template.mappings = { ...template.mappings, _meta: { template_hash: hash, template_version: file.version } };
    return {
      names,
      hash,
      version: file.version,
      body: {
        index_patterns: [`${names.concretePrefix}*`],
        composed_of: [componentName],
        priority: file.priority ?? 200,
        version: file.version,
        _meta: { ...file._meta, content_hash: hash, managed_by: 'social-search' },
        template,
      },
    };
  }

  async function installComponent(): Promise<ApplyLine> {
    const hash = hashOf(component);
    const existing = await engineCall(() =>
      nullWhenAbsent(client.cluster.getComponentTemplate({ name: componentName })),
    );
    const installed = existing?.component_templates[0]?.component_template;
    const installedHash = metaString(installed?._meta, 'content_hash');
    if (installedHash === hash) return { object: `component template ${componentName}`, action: 'unchanged' };
    await engineCall(() =>
      client.cluster.putComponentTemplate({
        name: componentName,
        version: component.version,
        _meta: { ...component._meta, content_hash: hash, managed_by: 'social-search' },
        template: component.template,
      }),
    );
    return installed
      ? {
          object: `component template ${componentName}`,
          action: 'updated',
          detail: `was ${installedHash ?? 'unmanaged'}, now ${hash}`,
        }
      : { object: `component template ${componentName}`, action: 'created' };
  }

  async function installIndexTemplate(name: IndexName): Promise<ApplyLine> {
    const desired = desiredIndexTemplate(name);
    return putIndexTemplateIfChanged(client, desired.names.template, desired.body, desired.hash, {
      rebuildHint: `run \`social-search indices rebuild ${name}\` to rebuild existing data with it`,
    });
  }

  async function aliasTargets(alias: string): Promise<string[]> {
    const exists = await engineCall(() => client.indices.existsAlias({ name: alias }));
    if (!exists) return [];
    const response = await engineCall(() => client.indices.getAlias({ name: alias }));
    return Object.keys(response).sort();
  }

  async function ensureIndex(name: IndexName): Promise<ApplyLine[]> {
    const desired = desiredIndexTemplate(name);
    const targets = await aliasTargets(desired.names.read);
    if (targets.length > 0) {
      const stale = await staleIndices(targets, desired.hash);
      const counts = await liveSettings(client, targets);
      const shards = [...new Set(targets.map((i) => counts.get(i)?.primaries))];
      const detail =
        shards.length === 1 && shards[0] !== layout.number_of_shards
          ? `has ${shards[0]} primary shard${shards[0] === 1 ? '' : 's'}, ${layout.number_of_shards} configured (INDEX_SHARDS); run \`social-search indices rebuild ${name}\``
          : stale.length > 0
            ? `built from an older template; run \`social-search indices rebuild ${name}\``
            : undefined;
      return [
        {
          object: `alias ${desired.names.read} → ${targets.join(', ')}`,
          action: 'unchanged',
          ...(detail ? { detail } : {}),
        },
        ...(stale.length > 0 ? await addNewFields(name, stale) : []),
        ...(await applyLiveSettings(targets, counts)),
      ];
    }
    const index = concreteIndexName(desired.names, desired.version);
    await engineCall(() =>
      client.indices.create({
        index,
        aliases: { [desired.names.read]: {}, [desired.names.write]: { is_write_index: true } },
        wait_for_active_shards: 1,
      }),
    );
    return [{ object: `index ${index} behind ${desired.names.read}, ${desired.names.write}`, action: 'created' }];
  }

  /**
   * Adds the current template's new fields to live indices built from an older one, so that a new
   * release can write its documents at once; the records already there get values for them only
   * when rewritten (a rebuild rewrites them all). A change that is not an addition (a field's type,
   * an analyzer) cannot be made live: that index keeps its mapping and needs the rebuild.
   */
  async function addNewFields(name: IndexName, stale: string[]): Promise<ApplyLine[]> {
    const { _meta: _kept, ...mappings } = desiredIndexTemplate(name).body.template.mappings ?? {};
    const wanted = fieldPaths(mappings.properties);
    const live = await engineCall(() => client.indices.getMapping({ index: stale }));
    const indices = stale.filter((index) => {
      const have = new Set(fieldPaths(live[index]?.mappings.properties));
      return wanted.some((path) => !have.has(path));
    });
    if (indices.length === 0) return [];
    try {
      await engineCall(() => client.indices.putMapping({ index: indices, ...mappings }));
      return indices.map((index) => ({
        object: `mappings of ${index}`,
        action: 'updated' as const,
        detail: `the current template's new fields added; \`social-search indices rebuild ${name}\` fills them for existing records`,
      }));
    } catch (error) {
      return indices.map((index) => ({
        object: `mappings of ${index}`,
        action: 'unchanged' as const,
        detail: `cannot take the current template live (${error instanceof Error ? error.message : String(error)}); run \`social-search indices rebuild ${name}\``,
      }));
    }
  }

  /** Sets INDEX_REPLICAS and INDEX_REFRESH_INTERVAL on the live indices that differ; one line per change. */
  async function applyLiveSettings(
    indices: string[],
    live: Map<string, LiveSettings>,
    options: { refreshInterval?: boolean } = {},
  ): Promise<ApplyLine[]> {
    const lines: ApplyLine[] = [];
    const replicas = layout.number_of_replicas;
    const differ = indices.filter((i) => live.get(i)?.replicas !== replicas);
    if (differ.length > 0) {
      await engineCall(() => client.indices.putSettings({ index: differ, settings: { number_of_replicas: replicas } }));
      lines.push(
        ...differ.map((index) => ({
          object: `replicas of ${index}`,
          action: 'updated' as const,
          detail: `${live.get(index)?.replicas} → ${replicas} (INDEX_REPLICAS)`,
        })),
      );
    }
    const interval = layout.refresh_interval;
    if (options.refreshInterval === false) return lines;
    const slow = indices.filter((i) => live.get(i)?.refreshInterval !== interval);
    if (slow.length > 0) {
      await engineCall(() => client.indices.putSettings({ index: slow, settings: { refresh_interval: interval } }));
      lines.push(
        ...slow.map((index) => ({
          object: `refresh interval of ${index}`,
          action: 'updated' as const,
          detail: `${live.get(index)?.refreshInterval} → ${interval} (INDEX_REFRESH_INTERVAL)`,
        })),
      );
    }
    return lines;
  }

  async function staleIndices(indices: string[], hash: string): Promise<string[]> {
    const mappings = await engineCall(() => client.indices.getMapping({ index: indices }));
    return indices.filter((i) => fieldOf(mappings[i]?.mappings._meta, 'template_hash') !== hash);
  }

  return {
    async apply() {
      const lines = [await installComponent()];
      for (const name of INDEX_NAMES) lines.push(await installIndexTemplate(name));
      for (const name of INDEX_NAMES) lines.push(...(await ensureIndex(name)));
      lines.push(await history.install());
      const months = await history.indices();
      // Replicas only: the history's months refresh on their own schedule (history-admin.ts).
      if (months.length > 0)
        lines.push(
          ...(await applyLiveSettings(months, await liveSettings(client, months), { refreshInterval: false })),
        );
      return lines;
    },

    async status() {
      const out: IndexStatus[] = [];
      for (const name of INDEX_NAMES) {
        const desired = desiredIndexTemplate(name);
        const targets = await aliasTargets(desired.names.read);
        let docs = 0;
        let health = 'missing';
        let upToDate = false;
        let builtFrom: number | null = null;
        let shards: IndexStatus['shards'] = null;
        let refreshInterval: string | null = null;
        let copies: ShardCopy[] = [];
        if (targets.length > 0) {
          const mappings = await engineCall(() => client.indices.getMapping({ index: targets }));
          const versions = targets.map((i) => fieldOf(mappings[i]?.mappings._meta, 'template_version'));
          builtFrom = versions.every((v) => typeof v === 'number') ? Math.min(...versions) : null;
          const count = await engineCall(() => client.count({ index: desired.names.read }));
          docs = count.count;
          const h = await engineCall(() => client.cluster.health({ index: targets, level: 'cluster' }));
          health = h.status;
          upToDate = (await staleIndices(targets, desired.hash)).length === 0;
          const live = (await liveSettings(client, targets)).get(targets[0]!);
          shards = live ? { primaries: live.primaries, replicas: live.replicas } : null;
          refreshInterval = live?.refreshInterval ?? null;
          copies = await shardAllocation(client, targets);
        }
        out.push({
          name,
          read_alias: desired.names.read,
          write_alias: desired.names.write,
          indices: targets,
          template_version: builtFrom,
          up_to_date: upToDate,
          docs,
          health,
          shards,
          refresh_interval: refreshInterval,
          allocation: copies,
        });
      }
      return out;
    },

    async rebuild(name, options = {}) {
      await this.apply();
      const desired = desiredIndexTemplate(name);
      const from = await aliasTargets(desired.names.read);
      const to = concreteIndexName(desired.names, desired.version);
      await engineCall(() =>
        client.indices.create({ index: to, settings: { refresh_interval: '-1' }, wait_for_active_shards: 1 }),
      );
      let copied: number;
      try {
        // A point in time sees only refreshed segments: without this refresh, the writes of the
        // last jobs before the pause (up to one refresh interval) would not be copied, and would
        // be lost with the old index.
        await refreshAll(client, desired.names.read);
        const copy = {
          from: desired.names.read,
          to,
          ...(options.transform ? { transform: options.transform } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        };
        copied =
          name === 'posts'
            ? await copyRecords<PostRecord>(client, { ...copy, project: projectPost })
            : await copyRecords<AccountRecord>(client, { ...copy, project: projectAccount });
        await engineCall(() =>
          client.indices.putSettings({ index: to, settings: { refresh_interval: layout.refresh_interval } }),
        );
        await engineCall(() => client.indices.refresh({ index: to }));
        const counted = (await engineCall(() => client.count({ index: to }))).count;
        if (counted !== copied)
          throw new Error(`copy into ${to} has ${counted} documents, expected ${copied}; aliases left unchanged`);
        // Cancellable up to the swap, not after: then the new index is the live one.
        options.signal?.throwIfAborted();
        // One atomic alias update: readers switch from the old index to the new one with no gap.
        await engineCall(() =>
          client.indices.updateAliases({
            actions: [
              ...from.flatMap((index) => [
                { remove: { index, alias: desired.names.read } },
                { remove: { index, alias: desired.names.write } },
              ]),
              { add: { index: to, alias: desired.names.read } },
              { add: { index: to, alias: desired.names.write, is_write_index: true } },
            ],
          }),
        );
      } catch (error) {
        // Nothing of a failed or cancelled copy stays behind; readers never saw it (the alias
        // swap is atomic: if it failed, nothing points at the new index).
        await client.indices.delete({ index: to }).catch(() => undefined);
        throw error;
      }
      await deps.visibility.advance();
      if (!options.keepOld && from.length > 0) await engineCall(() => client.indices.delete({ index: from }));
      return { from, to, copied };
    },

    async removeOrphans(name) {
      const names = indexNames(indexPrefix, name);
      const all = await engineCall(() =>
        client.indices.get({
          index: `${names.concretePrefix}*`,
          expand_wildcards: 'all',
          allow_no_indices: true,
          features: ['settings'],
        }),
      );
      const live = new Set([...(await aliasTargets(names.read)), ...(await aliasTargets(names.write))]);
      const created = (index: string) => Number(all[index]?.settings?.index?.creation_date ?? 0);
      const newestLive = Math.max(0, ...[...live].map(created));
      // With no live index there is no telling an orphan from data: leave everything.
      if (newestLive === 0) return [];
      const orphans = Object.keys(all).filter((index) => !live.has(index) && created(index) > newestLive);
      if (orphans.length > 0) await engineCall(() => client.indices.delete({ index: orphans }));
      return orphans;
    },

    historyStatus() {
      return history.status(retentionDays);
    },

    pruneHistory(now) {
      return history.prune(now, retentionDays);
    },

    async destroy() {
      for (const name of INDEX_NAMES) {
        const names = indexNames(indexPrefix, name);
        // Wildcard deletes are refused (action.destructive_requires_name): resolve names first.
        const concrete = Object.keys(
          await engineCall(() =>
            client.indices.get({ index: `${names.concretePrefix}*`, expand_wildcards: 'all', allow_no_indices: true }),
          ),
        );
        if (concrete.length > 0) await engineCall(() => client.indices.delete({ index: concrete }));
        await client.indices.deleteIndexTemplate({ name: names.template }).catch(() => undefined);
      }
      const months = await history.indices();
      if (months.length > 0) await engineCall(() => client.indices.delete({ index: months }));
      await client.indices.deleteIndexTemplate({ name: historyNames.template }).catch(() => undefined);
      await client.cluster.deleteComponentTemplate({ name: componentName }).catch(() => undefined);
    },
  };
}
