/**
 * The `allocations` table and the "live bytes by site over time across
 * hosts" query, on hand-made heap traces that lib/tachyon's heap trace readers are
 * mocked to return for small profile files (one per host): the query's
 * answer at every grid time equals heapProfile's inuse_space there, summed
 * over the hosts; an export's Parquet holds the same rows.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { EXAMPLE_QUERIES, exportParquet, querySql, sqlRowObjects } from '../../lib/fleet/index';
import { AllocationRows } from '../../lib/fleet/allocations';
import { heapProfile, type HeapTraceSource } from '../../lib/memory/index';
import { aggregate } from '../../lib/query/aggregate';
import { handTrace, leakAndGarbage, writeCpuStandIn, rotate } from '../memory/hand-trace';
import { scratchDir } from '../support/scratch-dir';

const traces = new Map<string, () => HeapTraceSource>();
vi.mock('../../lib/tachyon/index', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  openHeapTrace: (file: string) => traces.get(path.resolve(file))?.() ?? null,
  heapTraceOfFile: (_bytes: Uint8Array, file: string) => traces.get(path.resolve(file))?.() ?? null,
}));

const work = scratchDir('profpack-allocations-');

function hostFile(host: string, seconds: number): string {
  const dir = path.join(work, 'fleet', host);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'app.tach');
  writeCpuStandIn(file, 0);
  traces.set(file, () => handTrace(4096, leakAndGarbage(seconds), 0).trace);
  return file;
}

describe('allocations table', () => {
  const hosts = { a: 6, b: 9, c: 12 };
  const files = Object.entries(hosts).map(([host, seconds]) => hostFile(host, seconds));

  it('live bytes by site over time across hosts: inuse_space at each time, summed over the hosts', async () => {
    const rows = sqlRowObjects(
      await querySql(EXAMPLE_QUERIES.liveBytesBySite(1, 0), [path.join(work, 'fleet')], {
        hostOf: (f) => path.basename(path.dirname(f)),
      }),
    );
    const times = [...new Set(rows.map((r) => Number(r.time_us)))].sort((x, y) => x - y);
    expect(times[0]).toBe(1_000_000);
    expect(times.length).toBeGreaterThanOrEqual(12);
    for (const t of times) {
      const want = new Map<string, { bytes: number; hosts: number }>();
      for (const file of files) {
        const result = aggregate(heapProfile(traces.get(file)!(), { at: t / 1000 }).profile, {
          sampleType: 'inuse_space',
          limit: 0,
        });
        for (const r of result.rows) {
          if (r.self === 0) continue;
          const w = want.get(r.funcname!) ?? { bytes: 0, hosts: 0 };
          want.set(r.funcname!, { bytes: w.bytes + r.self, hosts: w.hosts + 1 });
        }
      }
      const got = rows.filter((r) => Number(r.time_us) === t);
      expect(got.map((r) => r.funcname).sort()).toEqual([...want.keys()].sort());
      for (const r of got) {
        const w = want.get(String(r.funcname))!;
        expect(Number(r.hosts)).toBe(w.hosts);
        expect(Math.abs(Number(r.live_bytes) - w.bytes)).toBeLessThanOrEqual(3);
      }
    }
    // At the end of the longest recording only its leak is live.
    expect(rows.filter((r) => Number(r.time_us) === times[times.length - 1]).map((r) => r.funcname)).toEqual(['leak']);
  });

  it('export writes the table to Parquet, and the query over it answers as over the files', async () => {
    const out = path.join(work, 'parquet');
    const result = await exportParquet([path.join(work, 'fleet')], out, {
      hostOf: (f) => path.basename(path.dirname(f)),
    });
    // Each host's 11 objects a second, every one of them a row.
    expect(result.allocations).toBe(Object.values(hosts).reduce((n, s) => n + 11 * s, 0));
    const q = EXAMPLE_QUERIES.liveBytesBySite(1, 0);
    expect(await querySql(q, [out])).toEqual(
      await querySql(q, [path.join(work, 'fleet')], { hostOf: (f) => path.basename(path.dirname(f)) }),
    );
    const freed = sqlRowObjects(
      await querySql('SELECT count(*) FILTER (WHERE free_us IS NULL) AS live, count(*) AS n FROM allocations', [out]),
    )[0]!;
    expect(Number(freed.live)).toBe(6 + 9 + 12);
  });

  it("a process's rotated files are one life: an inherited object is one row, freed where it died", () => {
    const rows: unknown[][] = [];
    const stackIdOf = (_f: unknown, _s: unknown, sid: number) => BigInt(sid);
    const table = new AllocationRows({ appendRow: (r) => rows.push([...r]) }, stackIdOf);
    const [first, second] = rotate(handTrace(4096, leakAndGarbage(8), 0).trace, 4_500_000);
    const [a, b] = [hostFile('rotated-1', 1), hostFile('rotated-2', 1)];
    traces.set(a, () => first);
    traces.set(b, () => second);
    table.addFile(a, 1n, 'process');
    table.addFile(b, 2n, 'process');
    table.finish();
    expect(rows).toHaveLength(11 * 8);
    // Garbage of second 4 is freed at 5 s, in the second file: its rows name that file.
    const crossing = rows.filter((r) => r[5] === 4_000_000n && r[6] === 5_000_000n);
    expect(crossing).toHaveLength(10);
    for (const r of crossing) expect(r[0]).toBe(2n);
  });
});
