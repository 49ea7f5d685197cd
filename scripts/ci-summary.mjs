#!/usr/bin/env node
// Prints what the CI steps counted and, last, one plain line `ci: N passed, N failed, N skipped`.
// CI's reader does not know vitest's summary, and schemathesis closes on a pytest-style line
// ("2 warnings in 563s") that reads as "no test ran"; this line says what really ran.
// Usage: node scripts/ci-summary.mjs DIR — DIR holds vitest JSON reports (*.json) and JUnit
// reports (*.xml, schemathesis: one test case per operation), or folders of them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: ci-summary.mjs DIR');
  process.exit(2);
}

/** Counts of one report. */
const totals = { passed: 0, failed: 0, skipped: 0 };

/** A vitest JSON report: the numbers vitest itself printed. */
function vitestCounts(text) {
  const r = JSON.parse(text);
  return {
    passed: r.numPassedTests ?? 0,
    failed: (r.numFailedTests ?? 0) + (r.numFailedTestSuites && !r.numFailedTests ? r.numFailedTestSuites : 0),
    skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0),
  };
}

/** A JUnit report: its test cases, failed when they hold a failure or an error. */
function junitCounts(text) {
  const cases = text.match(/<testcase\b[\s\S]*?(?:\/>|<\/testcase>)/g) ?? [];
  let failed = 0;
  let skipped = 0;
  for (const c of cases) {
    if (/<(failure|error)\b/.test(c)) failed += 1;
    else if (/<skipped\b/.test(c)) skipped += 1;
  }
  return { passed: cases.length - failed - skipped, failed, skipped };
}

/** The counts of one report file, or of every report in a folder (schemathesis names its own). */
function countsOf(path) {
  if (statSync(path).isDirectory()) {
    const sum = { passed: 0, failed: 0, skipped: 0 };
    for (const name of readdirSync(path)) {
      const c = countsOf(join(path, name));
      if (!c) continue;
      sum.passed += c.passed;
      sum.failed += c.failed;
      sum.skipped += c.skipped;
    }
    return sum;
  }
  if (path.endsWith('.json')) return vitestCounts(readFileSync(path, 'utf8'));
  if (path.endsWith('.xml')) return junitCounts(readFileSync(path, 'utf8'));
  return undefined;
}

for (const name of readdirSync(dir).sort()) {
  const counts = countsOf(join(dir, name));
  if (!counts) continue;
  console.log(
    `${name.replace(/\.(json|xml)$/, '')}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`,
  );
  totals.passed += counts.passed;
  totals.failed += counts.failed;
  totals.skipped += counts.skipped;
}
console.log(`ci: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
