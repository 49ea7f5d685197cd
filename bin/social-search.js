#!/usr/bin/env node
// Runs the CLI from the TypeScript sources through tsx, so `npx social-search` works right after
// `npm ci` with no build step. A production image may run `npm run build` and set
// SOCIAL_SEARCH_DIST=1 to load the compiled JavaScript instead.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (process.env.SOCIAL_SEARCH_DIST === '1') {
  await import(pathToFileURL(join(root, 'dist/src/cli/main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src/cli/main.ts')).href);
}
