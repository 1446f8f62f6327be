// An allocation-heavy HTTP service under a bounded local load, in one process:
// a node:http server on 127.0.0.1 and a keep-alive client that sends N POST
// requests, at most 16 in flight. Each request carries a ~1.5 KB JSON order;
// the server parses it, builds a priced response tree, keeps the last 2000
// responses in a cache (a live set that churns) and answers with its JSON,
// which the client parses. Fixed work, so a recorder's cost shows as CPU
// time, not as fewer requests. argv[2]: requests (default 6000).
const http = require('node:http');

const requests = Number(process.argv[2] ?? 6000);
const inFlight = 16;
// Global: alive at exit, when recorders take their last look.
const responseCache = new Map();

function respond(order) {
  const lines = order.items.map((item) => ({
    sku: item.sku,
    qty: item.qty,
    label: `${item.sku}: ${item.name} for customer ${order.customer}`,
    price: Math.round(item.qty * item.unit * 100) / 100,
    tags: item.tags.map((t) => t.toUpperCase()),
  }));
  return { order: order.id, customer: order.customer, lines, total: lines.reduce((a, l) => a + l.price, 0) };
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const response = respond(JSON.parse(Buffer.concat(parts).toString('utf8')));
    responseCache.set(response.order, response);
    if (responseCache.size > 2000) responseCache.delete(responseCache.keys().next().value);
    const text = JSON.stringify(response);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});

function orderBody(id) {
  const items = Array.from({ length: 16 }, (_, k) => ({
    sku: `sku-${(id * 31 + k) % 5000}`,
    name: `item ${k} of order ${id}`,
    qty: 1 + ((id + k) % 5),
    unit: 0.5 + ((id * k) % 97) / 10,
    tags: ['new', 'promo', 'bulk'].slice(0, 1 + (k % 3)),
  }));
  return JSON.stringify({ id, customer: id % 977, items });
}

server.listen(0, '127.0.0.1', () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const { port } = server.address();
  let sent = 0;
  let done = 0;
  let checksum = 0;
  const send = () => {
    const id = sent++;
    const body = orderBody(id);
    const req = http.request(
      { agent, port, host: '127.0.0.1', method: 'POST', path: '/order', headers: { 'content-type': 'text/json' } },
      (res) => {
        const parts = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () => {
          checksum += JSON.parse(Buffer.concat(parts).toString('utf8')).lines.length;
          if (++done === requests) {
            if (checksum !== requests * 16) throw new Error(`bad responses: ${checksum}`);
            agent.destroy();
            server.close();
          } else if (sent < requests) send();
        });
      },
    );
    req.end(body);
  };
  for (let i = 0; i < Math.min(inFlight, requests); i++) send();
});
