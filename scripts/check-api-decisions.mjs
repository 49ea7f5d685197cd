// Keeps docs/api-decisions.md "each decision and its reason, as it stands" (part of `npm run check`):
// at most 40,000 bytes, no dated changelog phrases ("until 2026-11-27"), and every link to one of its
// headings, from any tracked file, names a heading it has.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const DOC = 'docs/api-decisions.md';
const MAX_BYTES = 40_000;
const text = readFileSync(DOC, 'utf8');
const problems = [];

const bytes = Buffer.byteLength(text);
if (bytes > MAX_BYTES) problems.push(`${bytes} bytes, over ${MAX_BYTES}: history belongs in git, figures in bench/`);

for (const dated of text.matchAll(/\b(until|before|since|after|as of|from)\s+\(?20\d\d-\d\d/gi)) {
  const line = text.slice(0, dated.index).split('\n').length;
  problems.push(`line ${line}: "${dated[0].replace(/\s+/g, ' ')}": say what holds now, not when it changed`);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
const anchors = new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1].trim())));

const files = execFileSync('git', ['ls-files', '*.md', '*.ts', '*.toml', '*.mjs'], { encoding: 'utf8' })
  .trim()
  .split('\n');
for (const file of files) {
  const source = readFileSync(file, 'utf8');
  const links = file === DOC ? /\]\(#([^)\s]+)\)/g : /api-decisions\.md#([A-Za-z0-9_-]+)/g;
  for (const [, anchor] of source.matchAll(links)) {
    if (!anchors.has(anchor)) problems.push(`${file}: links to ${DOC}#${anchor}, which is no heading`);
  }
}

if (problems.length > 0) {
  console.error(`${DOC}:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
