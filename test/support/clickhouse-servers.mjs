/**
 * Real ClickHouse servers for the tests (Debian's clickhouse-server, which
 * scripts/test-tools.sh installs when missing): each a child process on free
 * loopback ports with a generated config (its own temporary data directory,
 * listen_host 127.0.0.1, no system-wide config read), all of them one
 * `remote_servers` cluster whose shards are the servers in order. Stopped
 * after the test file (also when a test fails) and on this process's exit.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const TEST_CLUSTER = 'profpack_test';

/** The server binary: Debian puts it in /usr/sbin, which a non-root PATH may lack. */
export function clickhouseServerBinary() {
  for (const p of ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server']) if (existsSync(p)) return p;
  const found = spawnSync('sh', ['-c', 'command -v clickhouse-server'], { encoding: 'utf8' }).stdout.trim();
  if (found === '')
    throw new Error(
      'clickhouse-server is missing: scripts/test-tools.sh installs it (apt-get install clickhouse-server)',
    );
  return found;
}

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

const live = new Set();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

function writeConfig(dir, httpPort, tcpPort, shardPorts) {
  const shards = shardPorts
    .map((p) => `<shard><replica><host>127.0.0.1</host><port>${p}</port></replica></shard>`)
    .join('');
  writeFileSync(
    path.join(dir, 'config.xml'),
    `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><console>0</console><log>${dir}/server.log</log><errorlog>${dir}/error.log</errorlog></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <remote_servers><${TEST_CLUSTER}>${shards}</${TEST_CLUSTER}></remote_servers>
</yandex>
`,
  );
  writeFileSync(
    path.join(dir, 'users.xml'),
    `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>1000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
`,
  );
}

async function waitReady(server, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let exited = null;
  server.child.once('exit', (code) => (exited = code ?? -1));
  for (;;) {
    if (exited !== null) throw new Error(`clickhouse-server exited (${exited}) while starting: see ${server.dir}`);
    try {
      const r = await fetch(`${server.url}/?query=SELECT%201`);
      if (r.ok && (await r.text()).trim() === '1') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`clickhouse-server at ${server.url} not ready after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function launch(server) {
  const child = spawn(clickhouseServerBinary(), [`--config-file=${path.join(server.dir, 'config.xml')}`], {
    cwd: server.dir,
    stdio: 'ignore',
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  server.child = child;
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** `count` servers, one cluster of `count` shards, ready to query. */
export async function startClickHouseServers(count = 2) {
  const root = mkdtempSync(path.join(tmpdir(), 'profpack-clickhouse-'));
  const ports = [];
  const taken = new Set();
  while (ports.length < count) {
    const http = await freePort();
    const tcp = await freePort();
    if (http === tcp || taken.has(http) || taken.has(tcp)) continue;
    taken.add(http).add(tcp);
    ports.push({ http, tcp });
  }
  const servers = ports.map((p, i) => {
    const dir = path.join(root, `server${i + 1}`);
    mkdirSync(dir);
    writeConfig(
      dir,
      p.http,
      p.tcp,
      ports.map((q) => q.tcp),
    );
    return { url: `http://127.0.0.1:${p.http}`, tcpPort: p.tcp, dir, child: null };
  });
  const stop = async () => {
    await Promise.all(
      servers.map(async (s) => {
        if (s.child === null) return;
        // Its data is thrown away: no need for a clean shutdown (SIGTERM waits seconds for its connections).
        s.child.kill('SIGKILL');
        await exited(s.child);
        s.child = null;
      }),
    );
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (const s of servers) launch(s);
    await Promise.all(servers.map((s) => waitReady(s)));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    servers,
    urls: servers.map((s) => s.url),
    cluster: TEST_CLUSTER,
    async kill(i) {
      const s = servers[i];
      if (s.child === null) return;
      s.child.kill('SIGKILL');
      await exited(s.child);
      s.child = null;
    },
    async restart(i) {
      const s = servers[i];
      launch(s);
      await waitReady(s);
    },
    stop,
  };
}
