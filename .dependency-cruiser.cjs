/**
 * The floor plan, checked on every `npm test`: each folder of src/ may import only
 * the folders listed for its layer, all of which sit below it, so no import runs up a layer and
 * no two folders import each other. Layers, top to bottom (docs/architecture.md):
 *
 *   cli → start → http, jobs → services → queues, render → engine (roles), query, text,
 *   media, seed → domain → contract → internal
 *
 * The engine and embedding adapters (src/engine/elasticsearch, src/embedding) implement roles for
 * the layers above and are wired in by src/start only; the percolator (src/percolator, Elasticsearch
 * queries evaluated in the process) serves the engine adapter.
 */
const layers = {
  cli: { path: '^src/cli/', may: ['start', 'services', 'engine', 'seed', 'contract', 'internal'] },
  start: {
    path: '^src/start/',
    may: [
      'http',
      'jobs',
      'services',
      'queues',
      'render',
      'engine',
      'elasticsearch',
      'embedding',
      'query',
      'text',
      'media',
      'domain',
      'contract',
      'internal',
    ],
  },
  http: { path: '^src/http/', may: ['services', 'query', 'render', 'media', 'domain', 'contract', 'internal'] },
  jobs: { path: '^src/jobs/', may: ['services', 'queues', 'contract', 'internal'] },
  services: {
    path: '^src/services/',
    may: ['queues', 'render', 'engine', 'query', 'text', 'media', 'domain', 'contract', 'internal'],
  },
  queues: { path: '^src/queues/', may: ['contract', 'internal'] },
  render: { path: '^src/render/', may: ['media', 'domain', 'contract', 'internal'] },
  engine: { path: '^src/engine/[^/]+$', may: ['query', 'domain', 'contract', 'internal'] },
  elasticsearch: {
    path: '^src/engine/elasticsearch/',
    may: ['engine', 'percolator', 'query', 'text', 'domain', 'contract', 'internal'],
  },
  percolator: { path: '^src/percolator/', may: ['query', 'internal'] },
  embedding: { path: '^src/embedding/', may: ['internal'] },
  query: { path: '^src/query/', may: ['contract', 'internal'] },
  text: { path: '^src/text/', may: ['domain', 'contract', 'internal'] },
  media: { path: '^src/media/', may: ['internal'] },
  seed: { path: '^src/seed/', may: ['contract', 'internal'] },
  domain: { path: '^src/domain/', may: ['contract', 'internal'] },
  contract: { path: '^src/contract/', may: ['internal'] },
  internal: { path: '^src/internal/', may: [] },
};

const own = (name) => layers[name].path;

module.exports = {
  forbidden: [
    ...Object.entries(layers).map(([name, layer]) => ({
      name: `layer-${name}`,
      comment: `${name} may import only ${layer.may.join(', ') || 'nothing of src/'}`,
      severity: 'error',
      from: { path: layer.path },
      to: { path: '^src/', pathNot: [own(name), ...layer.may.map(own)] },
    })),
    {
      name: 'service-slices',
      comment: 'services are vertical slices: one never imports another (rebuilds excepted, below)',
      severity: 'error',
      from: { path: '^src/services/(?!indices/)([^/]+)/' },
      to: { path: '^src/services/', pathNot: '^src/services/$1/' },
    },
    {
      name: 'service-slices-rebuild',
      comment: "index rebuilds give records vectors with the intake's record embeddings",
      severity: 'error',
      from: { path: '^src/services/indices/' },
      to: { path: '^src/services/', pathNot: ['^src/services/indices/', '^src/services/intake/'] },
    },
    {
      name: 'elasticsearch-roles',
      comment:
        'the adapter by role: reads/, writes/ and admin/ never import one another; each builds on queries/ (engine requests), documents/ (what is stored) and the root (errors, names); engine.ts wires them',
      severity: 'error',
      from: { path: '^src/engine/elasticsearch/(reads|writes|admin)/' },
      to: { path: '^src/engine/elasticsearch/(reads|writes|admin)/', pathNot: '^src/engine/elasticsearch/$1/' },
    },
    {
      name: 'elasticsearch-foundations',
      comment:
        'queries/ and documents/ serve every role, so they import none of them, nor each other, nor engine.ts (only errors, names, response values and the vector format)',
      severity: 'error',
      from: { path: '^src/engine/elasticsearch/(queries|documents)/' },
      to: {
        path: '^src/engine/elasticsearch/',
        pathNot: [
          '^src/engine/elasticsearch/$1/',
          '^src/engine/elasticsearch/(errors|names|response-values|vectors)[.]ts$',
        ],
      },
    },
    {
      name: 'cli-loads-its-command',
      comment:
        "every command of src/cli is loaded by every process (one executable), so the HTTP layer, the worker's jobs and the seed's vocabulary are imported by the commands that run them, when they run (`await import`): a worker holds no HTTP code (bench/memory.md)",
      severity: 'error',
      from: { path: '^src/cli/' },
      to: {
        path: ['^src/start/(api|worker-process)[.]ts$', '^src/seed/generator[.]ts$'],
        dependencyTypesNot: ['dynamic-import', 'type-only'],
      },
    },
    {
      name: 'no-circular',
      comment: 'no module imports itself through others',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'runtime-dependencies',
      comment:
        'what src/ imports at run time is a dependency of package.json: a devDependency, or a package only another one brings, is gone after `npm prune --omit=dev` or its next update',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev', 'npm-no-pkg', 'npm-unknown'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // conditionNames: packages that only declare `exports` (tinyld) resolve as Node resolves them.
    enhancedResolveOptions: {
      extensions: ['.ts', '.mjs', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
