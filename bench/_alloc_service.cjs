// An allocation-heavy service loop without a network: N requests in batches
// of 100, one batch per event-loop turn (as a busy server takes them), each
// request parses a JSON body, builds a response object tree and its JSON, and
// the last 2000 responses stay in a cache (a live set that churns). Fixed
// work, so a recorder's cost shows as CPU time, not as fewer requests.
const requests = Number(process.argv[2] ?? 20000);
// Global: alive at exit, when recorders take their last look.
globalThis.responseCache = new Map();
function handle(i) {
  const body = JSON.parse(
    `{"user":${i % 977},"items":[${Array.from({ length: 20 }, (_, k) => `{"id":${k},"q":${(i + k) % 7}}`).join(',')}]}`,
  );
  const lines = body.items.map((item) => ({
    id: item.id,
    qty: item.q,
    label: `item-${item.id}-for-${body.user}`,
    price: item.q * 1.25,
  }));
  const response = { user: body.user, lines, total: lines.reduce((a, l) => a + l.price, 0) };
  const text = JSON.stringify(response);
  globalThis.responseCache.set(i, response);
  if (globalThis.responseCache.size > 2000)
    globalThis.responseCache.delete(globalThis.responseCache.keys().next().value);
  return text.length;
}
let next = 0;
function batch() {
  for (const end = Math.min(requests, next + 100); next < end; next++) handle(next);
  if (next < requests) setImmediate(batch);
}
batch();
