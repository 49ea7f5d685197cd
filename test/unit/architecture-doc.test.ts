import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QUEUES } from '../../src/queues/registry.ts';

/** docs/architecture.md, the newcomer's map: its queue lists must be the registry's. */
const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');

/** The text from the first line starting with `start` up to the next blank line. */
function paragraph(start: string): string {
  const from = doc.indexOf(start);
  expect(from, `docs/architecture.md has a paragraph starting ${start}`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n\n', from);
  return doc.slice(from, end < 0 ? undefined : end);
}

const queues = Object.keys(QUEUES);

describe('docs/architecture.md and the queue registry', () => {
  it('the worker process names every queue it consumes', () => {
    const worker = paragraph('- **worker process**');
    for (const name of queues) expect(worker).toContain(`\`${name}\``);
  });

  it('src/jobs/ lists one job handler per queue, and the folder holds exactly those', () => {
    const folder = paragraph('**`src/jobs/`**');
    const listed = [...folder.matchAll(/`([a-z-]+)\.ts`/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...queues].sort());
    const files = readdirSync(new URL('../../src/jobs/', import.meta.url)).filter((f) => f.endsWith('.ts'));
    expect(files.map((f) => f.slice(0, -'.ts'.length)).sort()).toEqual([...queues].sort());
  });
});
