#!/usr/bin/env bash
# Fuzzes the HTTP API with schemathesis (PyPI `schemathesis`, 4.x) against its own /openapi.json:
# a fresh service (API + worker) on demo data under a unique prefix, real post and account IDs,
# shortcodes and handles given to schemathesis as examples so GETs and searches reach their
# logic, positive and negative data, every check that applies (see schemathesis.toml for the one
# exception and why). Two schemathesis runs: the coverage phase on a document whose filter
# combinators are left out (why: below), then examples, fuzzing and stateful on the served one.
# Exit status: 0 when neither run failed. Cleans up after itself.
#
#   bash scripts/fuzz-api.sh                    # CI size: FUZZ_MAX_EXAMPLES=25 per operation and phase
#   FUZZ_MAX_EXAMPLES=1500 bash scripts/fuzz-api.sh   # a long local run (≥ 10,000 cases)
#   FUZZ_COVERAGE=full bash scripts/fuzz-api.sh      # coverage through the nested filters too (~1 h)
#   bash scripts/fuzz-api.sh --include-operation-id postFacets   # more st options, given to both runs
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-25}"
RUN="fuzz-$(date +%s)-$$"
WORK="$(mktemp -d)"
PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
BASE="http://127.0.0.1:$PORT"

export INDEX_PREFIX="$RUN" REDIS_PREFIX="$RUN" LOG_LEVEL="${LOG_LEVEL:-warn}" NODE_ENV=test
export HOST=127.0.0.1 PORT PUBLIC_BASE_URL="$BASE" RATE_LIMIT_SEARCH_PER_MINUTE=0 RATE_LIMIT_READ_PER_MINUTE=0 INTAKE_WAIT_TIMEOUT_MS=20000
# One client at one address sends every negative-auth case: past ten refused credentials a minute
# each 401 would wait the refusal pause (tested in test/integration/refusal-pause.test.ts).
export RATE_LIMIT_REFUSAL_PAUSE_MS=0
# Saved searches and webhook endpoints are fuzzed too; their deliveries stay queued, never sent:
# nothing of this run may reach a host the fuzzer made up (nor loopback, refused as always).
export WEBHOOK_DELIVERIES=paused
export SIGNING_SECRET="${SIGNING_SECRET:-fuzz-only-$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')}"

# With the model beside the repository (as npm start finds it), searches rank hybrid and
# `similar_to` answers from real vectors; without it they are BM25 only and `similar_to` a 503.
MODEL="${MODEL_DIR:-$PWD/../shared/models/all-MiniLM-L6-v2}"
if [ "${EMBEDDINGS:-}" != "off" ] && [ -f "$MODEL/config.json" ]; then
  export MODEL_DIR="$MODEL" EMBEDDINGS=on
else
  export EMBEDDINGS=off
fi

if ! command -v st >/dev/null 2>&1; then
  echo "fuzz-api: schemathesis is not installed (pip install schemathesis)" >&2
  exit 2
fi

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  local es="${ELASTICSEARCH_URL:-http://127.0.0.1:9200}"
  for index in $(curl -fs "$es/_cat/indices/$RUN-*?h=index" 2>/dev/null); do curl -fs -XDELETE "$es/$index" >/dev/null || true; done
  for template in $(curl -fs "$es/_index_template/$RUN-*" 2>/dev/null | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{try{for(const t of JSON.parse(s).index_templates)console.log(t.name)}catch{}})"); do
    curl -fs -XDELETE "$es/_index_template/$template" >/dev/null || true
  done
  # The index templates above compose this one; it goes last.
  curl -fs -XDELETE "$es/_component_template/$RUN-shared-settings" >/dev/null || true
  node -e "
    const { Redis } = require('ioredis');
    const r = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    r.keys(process.env.REDIS_PREFIX + ':*').then((k) => (k.length ? r.del(...k) : 0)).finally(() => r.disconnect());
  " 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

node bin/social-search.js indices apply >/dev/null
node bin/social-search.js worker >"$WORK/worker.log" 2>&1 & pids+=($!)
node bin/social-search.js serve >"$WORK/api.log" 2>&1 & pids+=($!)
KEY="$(node bin/social-search.js keys create --owner fuzz@example.com --name schemathesis --scopes search,ingest --json | node -e "process.stdin.on('data',d=>console.log(JSON.parse(d).key))")"
for _ in $(seq 1 120); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.5; done
node bin/social-search.js seed --posts 120 --accounts 12 --seed 11 --history --wait >/dev/null 2>&1

# The document as served, with real identifiers as examples (schemathesis's examples phase).
KEY="$KEY" BASE="$BASE" node --input-type=module -e "
const headers = { authorization: 'Bearer ' + process.env.KEY, 'content-type': 'application/json' };
const doc = await (await fetch(process.env.BASE + '/openapi.json')).json();
const page = await (await fetch(process.env.BASE + '/v1/social/posts/search', { method: 'POST', headers, body: JSON.stringify({ post: { filters: { format: { in: ['reel', 'video', 'image', 'carousel'] } } }, limit: 5 }) })).json();
const post = page.data[0];
if (!post) throw new Error('the demo data did not load');
const accounts = await (await fetch(process.env.BASE + '/v1/social/accounts/search', { method: 'POST', headers, body: JSON.stringify({ account: { filters: { followers_count: { gte: 0 } } }, limit: 1 }) })).json();
const account = accounts.data[0];
// With the model, wait (bounded) until the demo's vectors are in, so similar_to examples rank.
for (let i = 0; process.env.EMBEDDINGS === 'on' && i < 240; i++) {
  const probe = await fetch(process.env.BASE + '/v1/social/accounts/search', { method: 'POST', headers, body: JSON.stringify({ account: { similar_to: account.id }, limit: 1 }) });
  await probe.arrayBuffer();
  if (probe.status === 200) break;
  await new Promise((resolve) => setTimeout(resolve, 500));
}
const examples = (pairs) => Object.fromEntries(pairs.map(([name, value]) => [name, { value }]));
const setParam = (op, examplesById) => { for (const p of op.parameters ?? []) if (p.name === 'id') p.examples = examplesById; };
setParam(doc.paths['/v1/social/posts/{id}'].get, examples([['id', post.id], ['shortcode', post.shortcode]]));
setParam(doc.paths['/v1/social/accounts/{id}'].get, examples([['id', account.id], ['handle', account.handle], ['at_handle', '@' + account.handle]]));
setParam(doc.paths['/v1/social/posts/{id}/history'].get, examples([['id', post.id], ['shortcode', post.shortcode]]));
setParam(doc.paths['/v1/social/accounts/{id}/history'].get, examples([['id', account.id], ['at_handle', '@' + account.handle]]));
const body = (path) => doc.paths[path].post.requestBody.content['application/json'];
body('/v1/social/posts/search').examples = examples([
  ['query', { post: { query: 'skincare routine', filters: { views: { gte: 0 } } }, limit: 5 }],
  ['sorted', { post: { filters: { format: { in: ['reel'] } }, author: { filters: { followers_count: { gte: 0 } } } }, sort: { by: 'views', order: 'desc' }, limit: 3 }],
  ['similar', { post: { similar_to: post.shortcode, author: { filters: { followers_count: { gte: 0 } } } }, include: ['matches'], limit: 3 }],
  ['misspelt', { post: { query: 'skincar rutine' }, limit: 5 }],
]);
// Lookups, typeahead and dictionaries with real names: found and not-found entries together.
body('/v1/social/accounts/lookup').examples = examples([
  ['mixed', { handles: ['@' + account.handle, account.handle.toUpperCase(), 'nobody.here'], ids: [account.id, 'social_account_unknown'] }],
]);
body('/v1/social/posts/lookup').examples = examples([
  ['mixed', { shortcodes: [post.shortcode, 'NoSuchCode'], ids: [post.id] }],
]);
const query = (path, name, pairs) => { for (const p of doc.paths[path].get.parameters ?? []) if (p.name === name) p.examples = examples(pairs); };
query('/v1/social/suggest', 'q', [['handle', account.handle.slice(0, 3)], ['at', '@' + account.handle.slice(0, 2)], ['tag', '#' + (post.hashtags[0] ?? 'sk').slice(0, 3)], ['word', 'skin']]);
query('/v1/social/suggest', 'kinds', [['all', 'accounts,hashtags,mentions,topics,niches'], ['two', 'topics,niches']]);
body('/v1/social/accounts/search').examples = examples([
  ['query', { account: { query: account.handle }, limit: 5 }],
  ['posts', { account: { posts: { minimum_matching_posts: 1, filters: { format: { in: ['reel'] } } } }, sort: { by: 'followers_count', order: 'desc' } }],
  ['similar', { account: { similar_to: '@' + account.handle, filters: { followers_count: { gte: 0 } } }, include: ['matches'], limit: 3 }],
]);
// A saved search and a webhook endpoint of the fuzzer's holder, so their reads reach their logic.
const endpoint = await (await fetch(process.env.BASE + '/v1/social/webhook-endpoints', { method: 'POST', headers, body: JSON.stringify({ url: 'https://hooks.invalid/fuzz' }) })).json();
const saved = await (await fetch(process.env.BASE + '/v1/social/saved-searches', { method: 'POST', headers, body: JSON.stringify({ name: 'fuzz', post: { query: 'skincare routine' }, webhook_endpoint_id: endpoint.id }) })).json();
if (!saved.id || !endpoint.id) throw new Error('could not create the alert examples: ' + JSON.stringify([endpoint, saved]));
for (const path of ['/v1/social/saved-searches/{id}', '/v1/social/saved-searches/{id}/matches'])
  setParam(doc.paths[path].get, examples([['saved', saved.id]]));
for (const path of ['/v1/social/webhook-endpoints/{id}', '/v1/social/webhook-endpoints/{id}/deliveries'])
  setParam(doc.paths[path].get, examples([['endpoint', endpoint.id]]));
body('/v1/social/saved-searches').examples = examples([
  ['query', { name: 'retinol', post: { query: 'retinol serum', author: { filters: { followers_count: { gte: 10000 } } } } }],
  ['filters', { name: 'big reels', post: { filters: { format: { in: ['reel'] }, views: { gte: 100000 } } }, webhook_endpoint_id: endpoint.id }],
]);
body('/v1/social/webhook-endpoints').examples = examples([['https', { url: 'https://hooks.invalid/in', description: 'fuzz' }]]);
// The combinators, nested, in every grammar operation's examples (the coverage document below
// enumerates each field at the top level only).
const nestedPost = { any_of: [{ views: { gte: 0 } }, { not: { format: { in: ['image'] } } }], all_of: [{ hashtags: { exists: true } }] };
const nestedAccount = { not: { any_of: [{ is_verified: { eq: true } }, { followers_count: { lt: 0 } }] } };
body('/v1/social/posts/search').examples.nested = { value: { post: { query: 'routine', filters: nestedPost, author: { filters: nestedAccount } }, limit: 3 } };
body('/v1/social/posts/facets').examples = examples([['nested', { post: { filters: nestedPost }, facets: [{ field: 'format' }] }]]);
body('/v1/social/accounts/search').examples.nested = { value: { account: { filters: nestedAccount, posts: { filters: nestedPost } }, limit: 3 } };
body('/v1/social/accounts/facets').examples = examples([['nested', { account: { filters: nestedAccount }, facets: [{ field: 'niches' }] }]]);
// Counts over the demo's dates (the seed's year up to 2026-11-01), broken down, in a DST zone.
body('/v1/social/posts/counts').examples = examples([
  ['query', { post: { query: 'skincare routine', filters: { posted_at: { gte: '2026-03-01T00:00:00Z', lt: '2026-11-01T00:00:00Z' } } }, interval: 'week', time_zone: 'Europe/Paris', breakdown: { by: 'hashtags', size: 5 } }],
  ['nested', { post: { filters: { ...nestedPost, posted_at: { gte: '2026-10-01T00:00:00Z', lt: '2026-10-08T00:00:00Z' } }, author: { filters: nestedAccount } }, interval: 'hour', time_zone: 'America/New_York' }],
]);
body('/v1/social/saved-searches').examples.nested = { value: { name: 'nested', post: { filters: nestedPost, author: { filters: nestedAccount } } } };
const fs = await import('node:fs');
fs.writeFileSync('$WORK/openapi.json', JSON.stringify(doc));
// The coverage phase enumerates every keyword's boundary values at every position of the body.
// The filter grammar's combinators (any_of, all_of, not) hold the same field table again, two
// levels deep, so each grammar operation came to ~43,000 coverage cases (218,554 in all, about an
// hour of schemathesis's CPU on two cores, 2026-11-27) for 3,400 without them: the same validator
// asked the same question 13 times. The coverage document drops the combinators (each field is
// still enumerated, once); examples, fuzzing and the stateful phase run on the served document,
// nesting included. FUZZ_COVERAGE=full enumerates the served document as it is.
const flatten = (node) => {
  if (Array.isArray(node)) return node.forEach(flatten);
  if (!node || typeof node !== 'object') return;
  const props = node.properties;
  if (node.type === 'object' && props && 'any_of' in props && 'all_of' in props && 'not' in props) {
    delete props.any_of; delete props.all_of; delete props.not;
  }
  Object.values(node).forEach(flatten);
};
if (process.env.FUZZ_COVERAGE !== 'full') flatten(doc);
fs.writeFileSync('$WORK/openapi-coverage.json', JSON.stringify(doc));
"

# schemathesis closes on a pytest-style rule ("==== 2 warnings in 504s ===="), which a reader of
# CI output takes for pytest closing on no test run; the JUnit report carries the counts, so that
# one line is reworded (every other line passes through unchanged).
schemathesis() { # document, phases, extra options
  local document="$1" phases="$2"; shift 2
  st --config-file schemathesis.toml run "$document" --url "$BASE" --phases "$phases" \
    -H "Authorization: Bearer $KEY" \
    --checks all --mode all --max-examples "$MAX_EXAMPLES" --seed "${FUZZ_SEED:-1}" \
    --generation-database none --no-color --request-timeout 30 \
    --report junit --report-dir "${FUZZ_REPORT_DIR:-$WORK/report}" "$@" 2>&1 |
    sed -u -E 's/^=+ (.*) in ([0-9.]+)s =+$/fuzz-api: schemathesis closed after \2 s (\1)/'
  return "${PIPESTATUS[0]}"
}

set +e
echo "fuzz-api: schemathesis on $BASE, coverage phase (${FUZZ_COVERAGE:-each filter field once})"
schemathesis "$WORK/openapi-coverage.json" coverage "$@"
coverage_status=$?
echo "fuzz-api: schemathesis on $BASE, $MAX_EXAMPLES examples per operation and phase"
schemathesis "$WORK/openapi.json" examples,fuzzing,stateful "$@"
status=$?
set -e
[ "$status" -ne 0 ] || status=$coverage_status
if [ "$status" -ne 0 ]; then
  echo "--- API log (last 40 lines)"; tail -n 40 "$WORK/api.log"
  echo "--- worker log (last 20 lines)"; tail -n 20 "$WORK/worker.log"
fi
exit "$status"
