import type { Client } from '@elastic/elasticsearch';
import { z } from 'zod';
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
  COMPANIONS,
  INDEX_NAMES,
  ownerOf,
  type ApplyLine,
  type IndexAdmin,
  type IndexLayout,
  type IndexStatus,
  type StoredIndexName,
} from '../../index-admin.ts';
import type { VisibilityEpoch } from '../../visibility.ts';
import { componentTemplateName, concreteIndexName, indexNames } from '../names.ts';
import { createHistoryAdmin } from './history-admin.ts';
import { aliasTargets, inspectIndex, liveSettings, staleIndices, type LiveSettings } from './index-inspection.ts';
import { rebuildMembers } from './index-rebuild.ts';
import { setBacklogRefresh } from './backlog-refresh.ts';
import { postVectorsTemplate } from './post-vectors-template.ts';
import { metricHistoryNames } from '../documents/metric-history.ts';

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

  /** Every index kept under the prefix, each logical one followed by its companions. */
  const stored: readonly StoredIndexName[] = INDEX_NAMES.flatMap((name) => [name, ...COMPANIONS[name]]);

  /** The template file of `name` as installed (post-vectors: with the fields it takes from posts). */
  function templateFile(name: StoredIndexName): TemplateFile {
    if (name === 'post-vectors') return postVectorsTemplate(read('posts.index.json'), read('post-vectors.index.json'));
    return read(`${name}.index.json`);
  }

  /** The index template body as installed, with the hash of everything that shapes the index. */
  function desiredIndexTemplate(name: StoredIndexName) {
    const file = templateFile(name);
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

  async function installIndexTemplate(name: StoredIndexName): Promise<ApplyLine> {
    const desired = desiredIndexTemplate(name);
    return putIndexTemplateIfChanged(client, desired.names.template, desired.body, desired.hash, {
      rebuildHint: `run \`social-search indices rebuild ${ownerOf(name)}\` to rebuild existing data with it`,
    });
  }

  /** Creates `name`'s index behind its aliases when missing; else reports it, adds new fields, applies live settings. */
  async function ensureIndex(name: StoredIndexName): Promise<ApplyLine[]> {
    const desired = desiredIndexTemplate(name);
    const targets = await aliasTargets(client, desired.names.read);
    // A companion is rebuilt with its logical index, under that one's name.
    const rebuild = `run \`social-search indices rebuild ${ownerOf(name)}\``;
    if (targets.length > 0) {
      const stale = await staleIndices(client, targets, desired.hash);
      const counts = await liveSettings(client, targets);
      const shards = [...new Set(targets.map((i) => counts.get(i)?.primaries))];
      const detail =
        shards.length === 1 && shards[0] !== layout.number_of_shards
          ? `has ${shards[0]} primary shard${shards[0] === 1 ? '' : 's'}, ${layout.number_of_shards} configured (INDEX_SHARDS); ${rebuild}`
          : stale.length > 0
            ? `built from an older template; ${rebuild}`
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
  async function addNewFields(name: StoredIndexName, stale: string[]): Promise<ApplyLine[]> {
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
        detail: `the current template's new fields added; \`social-search indices rebuild ${ownerOf(name)}\` fills them for existing records`,
      }));
    } catch (error) {
      return indices.map((index) => ({
        object: `mappings of ${index}`,
        action: 'unchanged' as const,
        detail: `cannot take the current template live (${error instanceof Error ? error.message : String(error)}); run \`social-search indices rebuild ${ownerOf(name)}\``,
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

  /** Deletes every concrete index and the index template of `name`. */
  async function destroyIndex(name: StoredIndexName): Promise<void> {
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

  /** The concrete indices of `name` an interrupted rebuild left behind (IndexAdmin.removeOrphans), deleted. */
  async function removeOrphansOf(name: StoredIndexName): Promise<string[]> {
    const names = indexNames(indexPrefix, name);
    const all = await engineCall(() =>
      client.indices.get({
        index: `${names.concretePrefix}*`,
        expand_wildcards: 'all',
        allow_no_indices: true,
        features: ['settings'],
      }),
    );
    const live = new Set([...(await aliasTargets(client, names.read)), ...(await aliasTargets(client, names.write))]);
    const created = (index: string) => Number(all[index]?.settings?.index?.creation_date ?? 0);
    const newestLive = Math.max(0, ...[...live].map(created));
    // With no live index there is no telling an orphan from data: leave everything.
    if (newestLive === 0) return [];
    const orphans = Object.keys(all).filter((index) => !live.has(index) && created(index) > newestLive);
    if (orphans.length > 0) await engineCall(() => client.indices.delete({ index: orphans }));
    return orphans;
  }

  return {
    async apply() {
      const lines = [await installComponent()];
      for (const name of stored) lines.push(await installIndexTemplate(name));
      for (const name of stored) lines.push(...(await ensureIndex(name)));
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
        const inspect = (of: StoredIndexName) => {
          const desired = desiredIndexTemplate(of);
          return inspectIndex(client, desired.names, desired.hash);
        };
        const own = await inspect(name);
        const companions = [];
        for (const companion of COMPANIONS[name]) companions.push({ name: companion, ...(await inspect(companion)) });
        if (companions.length === 0) {
          out.push({ name, ...own });
          continue;
        }
        // One rebuild of `name` brings its companions up to date too: status says it under its name.
        const upToDate = own.up_to_date && companions.every((c) => c.up_to_date);
        out.push({ name, ...own, up_to_date: upToDate, companions });
      }
      return out;
    },

    async rebuild(name, options = {}) {
      await this.apply();
      const members = [name, ...COMPANIONS[name]].map((member) => {
        const desired = desiredIndexTemplate(member);
        return { name: member, names: desired.names, version: desired.version };
      });
      return rebuildMembers(
        { client, refreshInterval: layout.refresh_interval, visibility: deps.visibility },
        name,
        members,
        options,
      );
    },

    async removeOrphans(name) {
      const removed: string[] = [];
      for (const member of [name, ...COMPANIONS[name]]) removed.push(...(await removeOrphansOf(member)));
      return removed;
    },

    refreshForBacklog(interval) {
      const aliases = stored.map((name) => indexNames(indexPrefix, name).read);
      return setBacklogRefresh(client, aliases, layout.refresh_interval, interval);
    },

    historyStatus() {
      return history.status(retentionDays);
    },

    pruneHistory(now) {
      return history.prune(now, retentionDays);
    },

    async destroy() {
      for (const name of stored) await destroyIndex(name);
      const months = await history.indices();
      if (months.length > 0) await engineCall(() => client.indices.delete({ index: months }));
      await client.indices.deleteIndexTemplate({ name: historyNames.template }).catch(() => undefined);
      await client.cluster.deleteComponentTemplate({ name: componentName }).catch(() => undefined);
    },
  };
}
