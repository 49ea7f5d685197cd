// Counts the type assertions in src/ (`x as T` and `<T>x`, not `as const`), as
// docs/architecture.md ("Casts") reports them. `node scripts/count-casts.mjs --list` prints each.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const files = execFileSync('git', ['ls-files', 'src/*.ts'], { encoding: 'utf8' }).trim().split('\n');
const list = process.argv.includes('--list');
let total = 0;
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      if (!isConst) {
        total++;
        if (list) {
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          console.log(`${file}:${line}: ${node.type.getText(source).replace(/\s+/g, ' ')}`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
console.log(total);
