import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/internal/config.ts';

const issues = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
};

describe('the public base URL', () => {
  it('defaults to where the API listens, so links follow PORT; a set value wins, without a trailing slash', () => {
    expect(loadConfig({}).PUBLIC_BASE_URL).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ PORT: '3077' }).PUBLIC_BASE_URL).toBe('http://127.0.0.1:3077');
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).PUBLIC_BASE_URL).toBe('http://127.0.0.1:9000');
    expect(loadConfig({ HOST: 'api.local', PORT: '9000' }).PUBLIC_BASE_URL).toBe('http://api.local:9000');
    expect(loadConfig({ HOST: '::1', PORT: '9000' }).PUBLIC_BASE_URL).toBe('http://[::1]:9000');
    expect(loadConfig({ PORT: '3077', PUBLIC_BASE_URL: 'https://api.example.com/' }).PUBLIC_BASE_URL).toBe(
      'https://api.example.com',
    );
    expect(issues({ PUBLIC_BASE_URL: 'not a url' })).toEqual([expect.stringMatching(/^PUBLIC_BASE_URL: /)]);
  });
});

describe('configuration of the cluster', () => {
  it('ELASTICSEARCH_URL is one URL or a comma-separated list of them', () => {
    expect(loadConfig({}).ELASTICSEARCH_URL).toEqual(['http://127.0.0.1:9200']);
    expect(
      loadConfig({ ELASTICSEARCH_URL: 'http://es-1:9200, http://es-2:9200,http://es-3:9200' }).ELASTICSEARCH_URL,
    ).toEqual(['http://es-1:9200', 'http://es-2:9200', 'http://es-3:9200']);
    expect(issues({ ELASTICSEARCH_URL: 'http://es-1:9200,es-2' })).toEqual([
      expect.stringMatching(/^ELASTICSEARCH_URL\.1: /),
    ]);
    expect(issues({ ELASTICSEARCH_URL: ' , ' })).toEqual(['ELASTICSEARCH_URL: expected at least one URL']);
  });

  it('INDEX_SHARDS (default 1) and INDEX_REPLICAS (default 0) are bounded integers', () => {
    expect(loadConfig({})).toMatchObject({ INDEX_SHARDS: 1, INDEX_REPLICAS: 0 });
    expect(loadConfig({ INDEX_SHARDS: '3', INDEX_REPLICAS: '2' })).toMatchObject({
      INDEX_SHARDS: 3,
      INDEX_REPLICAS: 2,
    });
    expect(issues({ INDEX_SHARDS: '0' })).toEqual([expect.stringMatching(/^INDEX_SHARDS: /)]);
    expect(issues({ INDEX_REPLICAS: '-1' })).toEqual([expect.stringMatching(/^INDEX_REPLICAS: /)]);
    expect(issues({ INDEX_REPLICAS: 'one' })).toEqual([expect.stringMatching(/^INDEX_REPLICAS: /)]);
  });

  it('INDEX_REFRESH_INTERVAL (default 1s) is an Elasticsearch duration or -1', () => {
    expect(loadConfig({})).toMatchObject({ INDEX_REFRESH_INTERVAL: '1s' });
    for (const value of ['30s', '500ms', '2m', '-1'])
      expect(loadConfig({ INDEX_REFRESH_INTERVAL: value })).toMatchObject({ INDEX_REFRESH_INTERVAL: value });
    for (const value of ['30', '0s', '1h', 'fast', '-2'])
      expect(issues({ INDEX_REFRESH_INTERVAL: value })).toEqual([expect.stringMatching(/^INDEX_REFRESH_INTERVAL: /)]);
  });
});

describe('the signing keyring', () => {
  it('SIGNING_SECRET_PREVIOUS lists the secrets SIGNING_SECRET replaced, each at least 32 characters', () => {
    const current = 'c'.repeat(32);
    expect(loadConfig({ SIGNING_SECRET: current }).SIGNING_SECRET_PREVIOUS).toEqual([]);
    expect(
      loadConfig({ SIGNING_SECRET: current, SIGNING_SECRET_PREVIOUS: `${'a'.repeat(32)}, ${'b'.repeat(40)}` })
        .SIGNING_SECRET_PREVIOUS,
    ).toEqual(['a'.repeat(32), 'b'.repeat(40)]);
    expect(() => loadConfig({ SIGNING_SECRET: current, SIGNING_SECRET_PREVIOUS: 'short' })).toThrow(
      /SIGNING_SECRET_PREVIOUS/,
    );
  });
});

describe('the test-only perturbation of vectors', () => {
  it('EMBEDDING_NOISE is off unless set (empty is unset), and <distance>:<seed> when set', () => {
    expect(loadConfig({}).EMBEDDING_NOISE).toBeNull();
    expect(loadConfig({ EMBEDDING_NOISE: '' }).EMBEDDING_NOISE).toBeNull();
    expect(loadConfig({ EMBEDDING_NOISE: '0.015:2' }).EMBEDDING_NOISE).toEqual({ distance: 0.015, seed: 2 });
    for (const value of ['0.015', '1:1', '2.5:1', '-0.1:1', '0.01:x', '0.01:1:2'])
      expect(issues({ EMBEDDING_NOISE: value }), value).toEqual([expect.stringMatching(/^EMBEDDING_NOISE: /)]);
  });
});
