import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PcTable, PcTableSet, decodeVarintTable, lookupVarint, type VarintRun } from '../../lib/pctable/index';
import { base64Bytes, pcdataPath, readJsonLines, type TableRecord } from './data';

// Every table record of Go 1.21's compile tool (90,876 records, 55,763 distinct tables).
// Every record is encoded (fromVarint, byte totals checked against the reference's),
// decoded again (fromLinear on the encoding), and at every PC the linear lookup
// (lookupMany of the re-read table) must equal the varint table's value (decodeVarintTable's runs).
// runtime.pcvalue's scan (lookupVarint, PcTableSet.lookupVarintMany) costs O(runs) per PC,
// so it is checked at the first and last PC of (up to 256 of) the runs of every record plus
// 8 seeded random PCs per record, not at every PC.
const MAX_BOUNDARY_RUNS = 256;
const manifest = JSON.parse(readFileSync(pcdataPath('compile.manifest.json'), 'utf8')) as {
  stats: { tables: number; uniqueTables: number; rawBytesUniqueTables: number };
  verify: {
    linearBytesOneEncodingPerVarintTable: number;
    linearBytesDedupByContent: number;
    linearIndexWidths: Record<string, number>;
    linearChunks: number;
  };
};

/** xorshift32: a deterministic PC sample that does not depend on the code under test. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

describe('pcdata compile (all records)', () => {
  const records = readJsonLines<TableRecord>('compile.tables.jsonl.gz');
  const varint = records.map((r) => base64Bytes(r.b64));
  const tables: PcTable[] = [];
  const runsOf: VarintRun[][] = [];

  it('encodes and decodes every record, equal to the varint table at every PC', () => {
    expect(records.length).toBe(manifest.stats.tables);
    const maxSize = Math.max(...records.map((r) => r.size));
    const allPcs = Uint32Array.from({ length: maxSize }, (_, i) => i);
    const expected = new Int32Array(maxSize);
    const outReread = new Int32Array(maxSize);
    const problems: string[] = [];
    let pcsChecked = 0;
    records.forEach((r, i) => {
      const table = PcTable.fromVarint(varint[i]!, { size: r.size, quantum: r.quantum });
      tables.push(table);
      const reread = PcTable.fromLinear(table.bytes, { size: r.size, quantum: r.quantum });
      const runs = decodeVarintTable(varint[i]!, r.quantum);
      runsOf.push(runs);
      if (runs.length !== r.runs) problems.push(`rec ${i}: ${runs.length} runs, expected ${r.runs}`);
      for (const run of runs) expected.fill(run.value, run.startPc, run.endPc);
      const pcs = allPcs.subarray(0, r.size);
      reread.lookupMany(pcs, { out: outReread });
      for (let pc = 0; pc < r.size; pc++) {
        if (outReread[pc] !== expected[pc]) {
          problems.push(`rec ${i} (${r.name} ${r.kind}) pc ${pc}: linear ${outReread[pc]}, varint ${expected[pc]}`);
          break;
        }
      }
      if (table.lookup(r.size) !== null) problems.push(`rec ${i}: PC ${r.size} is not outside`);
      pcsChecked += r.size;
    });
    expect(problems.slice(0, 5)).toEqual([]);
    expect(problems.length).toBe(0);
    expect(pcsChecked).toBe(59_214_872); // the manifest's linearRoundTripChecks: every PC of every record
  });

  it('matches runtime.pcvalue (lookupVarint, lookupVarintMany) at run boundaries and random PCs', () => {
    expect(runsOf.length).toBe(records.length);
    const tableIndex: number[] = [];
    const pcList: number[] = [];
    const want: number[] = [];
    const next = random(0x9e3779b9);
    const problems: string[] = [];
    records.forEach((r, i) => {
      const runs = runsOf[i]!;
      const runAt = (pc: number): VarintRun => {
        let lo = 0;
        let hi = runs.length - 1;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (pc < runs[mid]!.endPc) hi = mid;
          else lo = mid + 1;
        }
        return runs[lo]!;
      };
      // Cost ~ runs^2 per table: all runs of the 90,476 tables with <= 256 runs, 256
      // evenly spaced runs (first and last included) of the 400 longer ones.
      const picked =
        runs.length <= MAX_BOUNDARY_RUNS
          ? runs
          : Array.from(
              { length: MAX_BOUNDARY_RUNS },
              (_, j) => runs[Math.round((j * (runs.length - 1)) / (MAX_BOUNDARY_RUNS - 1))]!,
            );
      for (const run of picked) {
        tableIndex.push(i, i);
        pcList.push(run.startPc, run.endPc - r.quantum);
        want.push(run.value, run.value);
      }
      for (let k = 0; k < 8; k++) {
        const pc = Math.floor((next() * r.size) / r.quantum) * r.quantum;
        tableIndex.push(i);
        pcList.push(pc);
        const run = runAt(pc);
        want.push(run.value);
        if (k === 0) {
          const hit = lookupVarint(varint[i]!, pc, r.quantum);
          if (hit === null || hit.value !== run.value || hit.startPc !== run.startPc || hit.endPc !== run.endPc) {
            problems.push(`rec ${i} pc ${pc}: lookupVarint ${JSON.stringify(hit)}, run ${JSON.stringify(run)}`);
          }
        }
      }
      if (lookupVarint(varint[i]!, r.size, r.quantum) !== null)
        problems.push(`rec ${i}: lookupVarint answers at PC ${r.size}`);
    });
    const set = new PcTableSet(tables);
    const idx = Uint32Array.from(tableIndex);
    const pcs = Uint32Array.from(pcList);
    const viaVarint = set.lookupVarintMany(idx, pcs);
    const viaLinear = set.lookupMany(idx, pcs);
    for (let k = 0; k < want.length; k++) {
      if (viaVarint[k] !== want[k] || viaLinear[k] !== want[k]) {
        problems.push(`rec ${idx[k]} pc ${pcs[k]}: varint ${viaVarint[k]}, linear ${viaLinear[k]}, runs ${want[k]}`);
        if (problems.length > 5) break;
      }
    }
    expect(problems.slice(0, 5)).toEqual([]);
    expect(want.length).toBe(2 * 1_070_809 + 8 * records.length); // both ends of 1,070,809 of the 1,196,557 runs, plus the random PCs
  });

  it('has the reference sizes: +24.1 % over the distinct varint tables', () => {
    expect(tables.length).toBe(records.length);
    // Records with the same pctab offset are one (linker-deduplicated) table.
    const byOffset = new Map<number, number>();
    records.forEach((r, i) => byOffset.set(r.off, i));
    let varintBytes = 0;
    let linearBytes = 0;
    let chunks = 0;
    const widths: Record<string, number> = {};
    const byContent = new Map<string, number>();
    for (const i of byOffset.values()) {
      const table = tables[i]!;
      varintBytes += varint[i]!.length;
      linearBytes += table.bytes.length;
      chunks += table.chunkCount;
      const width = ['none', 'u8', 'u16', '', 'u32'][table.indexWidth]!;
      widths[width] = (widths[width] ?? 0) + 1;
      byContent.set(Buffer.from(table.bytes).toString('latin1'), table.bytes.length);
    }
    const linearDedup = [...byContent.values()].reduce((a, b) => a + b, 0);
    let allVarint = 0;
    let allLinear = 0;
    records.forEach((_, i) => {
      allVarint += varint[i]!.length;
      allLinear += tables[i]!.bytes.length;
    });
    const pct = (a: number, b: number): string => `${(((a - b) / b) * 100).toFixed(1)} %`;
    console.log(
      `compile sizes: distinct varint tables ${byOffset.size} = ${varintBytes} B; linear, one per table ${linearBytes} B (${pct(linearBytes, varintBytes)}), ` +
        `deduplicated by content ${linearDedup} B (${pct(linearDedup, varintBytes)}); all ${records.length} records: varint ${allVarint} B, linear ${allLinear} B (${pct(allLinear, allVarint)})`,
    );
    expect(byOffset.size).toBe(manifest.stats.uniqueTables);
    expect(varintBytes).toBe(manifest.stats.rawBytesUniqueTables);
    expect(linearBytes).toBe(manifest.verify.linearBytesOneEncodingPerVarintTable);
    expect(linearDedup).toBe(manifest.verify.linearBytesDedupByContent);
    expect(pct(linearDedup, varintBytes)).toBe('24.1 %');
    expect(chunks).toBe(manifest.verify.linearChunks);
    expect(widths).toEqual(manifest.verify.linearIndexWidths);
  });
});
