// Counts the type assertions in src/ (`x as T` and `<T>x`, not `as const`), as
// docs/architecture.md ("Casts") reports them, and holds them to the rule `npm run check` enforces:
// at most CEILING of them, each with a comment saying why it is safe, on its line or the line
// above. `node scripts/count-casts.mjs --list` prints each.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

/** The most casts src/ may hold (docs/architecture.md, "Casts"). */
const CEILING = 45;

/** The lines (0-based) a comment of `source` touches: every comment is trivia before or after some node. */
function commentLines(source) {
  const lines = new Set();
  const add = (ranges) => {
    for (const range of ranges ?? []) {
      const first = source.getLineAndCharacterOfPosition(range.pos).line;
      const last = source.getLineAndCharacterOfPosition(range.end).line;
      for (let line = first; line <= last; line++) lines.add(line);
    }
  };
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(source.text, node.pos));
    add(ts.getTrailingCommentRanges(source.text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(source);
  // Comments before a closing token (`)`, `]`, `}`) belong to no node: lines that open with one.
  source.text.split('\n').forEach((text, line) => {
    if (/^\s*(\/\/|\/\*|\*)/.test(text)) lines.add(line);
  });
  return lines;
}

const files = execFileSync('git', ['ls-files', 'src/*.ts'], { encoding: 'utf8' }).trim().split('\n');
const list = process.argv.includes('--list');
let total = 0;
const uncommented = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  let comments;
  const visit = (node) => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      if (!isConst) {
        total++;
        comments ??= commentLines(source);
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const where = `${file}:${line + 1}: ${node.type.getText(source).replace(/\s+/g, ' ')}`;
        if (list) console.log(where);
        if (!comments.has(line) && !comments.has(line - 1)) uncommented.push(where);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
console.log(total);
let failed = false;
if (total > CEILING) {
  console.error(
    `${total} casts in src/, above the ceiling of ${CEILING}: type the value instead (docs/architecture.md, "Casts").`,
  );
  failed = true;
}
if (uncommented.length > 0) {
  console.error(`Casts without a comment saying why they are safe (on their line or the line above):`);
  for (const where of uncommented) console.error(`  ${where}`);
  failed = true;
}
if (failed) process.exit(1);
