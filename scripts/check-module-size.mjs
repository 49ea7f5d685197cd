// Fails when a module of src/ is over the line limit docs/architecture.md sets ("Module size"):
// a module that grows past it is split by responsibility. `node scripts/check-module-size.mjs`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const LIMIT = 400;
const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'src/*.ts'], { encoding: 'utf8' })
  .trim()
  .split('\n');
const over = files
  .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
  .filter(({ lines }) => lines > LIMIT);
for (const { file, lines } of over) console.error(`${file}: ${lines} lines (limit ${LIMIT})`);
process.exit(over.length === 0 ? 0 : 1);
