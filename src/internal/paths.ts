import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (the folder with package.json), from sources or from dist/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

/** Where the index templates live. */
export function templatesDir(): string {
  return join(packageRoot(), 'index-templates');
}

/** The dashboard's stylesheet and script (shipped as they are, in sources and images alike). */
export function dashboardAssetsDir(): string {
  return join(packageRoot(), 'src', 'http', 'dashboard', 'assets');
}

/**
 * The model folders `npm start` uses when none is configured, best first: bge-small-en-v1.5, which
 * `scripts/services.sh start` installs under .services/models (bench/relevance.md, "Other models":
 * SciFact 0.7354 against 0.7274, held-out questions 0.874× against 0.844×), then the workplace's
 * all-MiniLM-L6-v2 beside the repository.
 */
export function defaultModelDirs(): string[] {
  return [
    join(packageRoot(), '.services', 'models', 'bge-small-en-v1.5'),
    join(packageRoot(), '..', 'shared', 'models', 'all-MiniLM-L6-v2'),
  ];
}

/** The first of {@link defaultModelDirs} holding a model, or undefined when none does. */
export function defaultModelDir(): string | undefined {
  return defaultModelDirs().find((dir) => existsSync(join(dir, 'config.json')));
}
