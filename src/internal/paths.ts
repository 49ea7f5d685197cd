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
