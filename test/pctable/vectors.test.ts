import { describe, expect, it } from 'vitest';
import { ErrorCode, ProfpackError } from '../../lib/errors';
import { PcTable, PcTableSet, decodeVarintTable, lookupVarint } from '../../lib/pctable/index';
import { base64Bytes, readJsonLines, type LinearRecord, type QueryRecord, type TableRecord } from './data';

// The small sets of ../shared/data/pcdata: every record, every query.
const SETS = ['hello_amd64', 'hello_arm64', 'bigfunc_amd64'] as const;

describe.each(SETS)('pcdata %s', (set) => {
  const tables = readJsonLines<TableRecord>(`${set}.tables.jsonl`);
  const linear = readJsonLines<LinearRecord>(`${set}.linear.jsonl`);
  const queries = readJsonLines<QueryRecord>(`${set}.queries.jsonl`);
  const varint = tables.map((t) => base64Bytes(t.b64));
  const built = tables.map((t, i) => PcTable.fromVarint(varint[i]!, { size: t.size, quantum: t.quantum }));

  it('has one reference encoding per table record, in order', () => {
    expect(linear.length).toBe(tables.length);
    linear.forEach((l, i) => {
      expect(l.rec).toBe(i);
      expect(tables[i]!.i).toBe(i);
    });
  });

  // Loops collect problems and assert once: an expect() per query would dominate the run time.
  it('decodes every varint table into its runs, covering the function size', () => {
    const problems: string[] = [];
    tables.forEach((t, i) => {
      const runs = decodeVarintTable(varint[i]!, t.quantum);
      if (runs.length !== t.runs) problems.push(`rec ${i}: ${runs.length} runs, expected ${t.runs}`);
      if (runs[0]!.startPc !== 0 || runs[runs.length - 1]!.endPc !== t.size)
        problems.push(`rec ${i}: runs do not cover [0, ${t.size})`);
      for (let r = 1; r < runs.length; r++) {
        if (runs[r]!.startPc !== runs[r - 1]!.endPc || runs[r]!.startPc >= runs[r]!.endPc)
          problems.push(`rec ${i}: run ${r} is not contiguous`);
      }
    });
    expect(problems.slice(0, 5)).toEqual([]);
  });

  it('encodes every record to exactly the reference linear bytes', () => {
    const problems: string[] = [];
    tables.forEach((t, i) => {
      const expected = base64Bytes(linear[i]!.lin);
      const table = built[i]!;
      if (table.size !== t.size || table.chunkCount !== linear[i]!.chunks)
        problems.push(`rec ${i}: size/chunks differ`);
      if (Buffer.compare(Buffer.from(table.bytes), Buffer.from(expected)) !== 0)
        problems.push(`rec ${i} (${t.name} ${t.kind}): bytes differ`);
    });
    expect(problems.slice(0, 5)).toEqual([]);
    expect(problems.length).toBe(0);
  });

  it('answers every query with the varint lookup, the linear lookup and lookupMany', () => {
    const fromLinear = tables.map((t, i) =>
      PcTable.fromLinear(base64Bytes(linear[i]!.lin), { size: t.size, quantum: t.quantum }),
    );
    const pcs = new Uint32Array(queries.length);
    const tableIndex = new Uint32Array(queries.length);
    const problems: string[] = [];
    const say = (k: number, what: string, got: unknown): void => {
      problems.push(`query ${k} ${JSON.stringify(queries[k])}: ${what} gave ${JSON.stringify(got)}`);
    };
    queries.forEach((q, k) => {
      const t = tables[q.rec]!;
      if (q.kind !== t.kind) say(k, 'kind', t.kind);
      const hit = lookupVarint(varint[q.rec]!, q.pc, t.quantum);
      if (q.value === null) {
        if (q.why !== 'outside' || hit !== null) say(k, 'lookupVarint', hit);
      } else if (hit === null || hit.value !== q.value || hit.startPc !== q.start || hit.endPc !== q.end) {
        say(k, 'lookupVarint', hit);
      }
      const viaBuilt = built[q.rec]!.lookup(q.pc);
      if (viaBuilt !== q.value) say(k, 'fromVarint lookup', viaBuilt);
      const viaLinear = fromLinear[q.rec]!.lookup(q.pc);
      if (viaLinear !== q.value) say(k, 'fromLinear lookup', viaLinear);
      pcs[k] = q.pc;
      tableIndex[k] = q.rec;
    });
    expect(problems.slice(0, 5)).toEqual([]);
    expect(queries.filter((q) => q.why === 'outside').length).toBeGreaterThan(0);

    // Batches: per table (one crossing each) and across the set (one crossing). The set's
    // varint scan is the same rule as lookupVarint above; it skips the two bigfunc tables
    // of 26,667 and 66,669 runs there, which would double the longest scans of this file.
    const OUTSIDE = -0x8000_0000;
    const set = new PcTableSet(built);
    const viaSet = set.lookupMany(tableIndex, pcs, { outside: OUTSIDE });
    const short = queries.map((q) => tables[q.rec]!.runs <= 20_000);
    const shortIdx = tableIndex.filter((_, k) => short[k]);
    const viaShort = set.lookupVarintMany(
      shortIdx,
      pcs.filter((_, k) => short[k]),
      { outside: OUTSIDE },
    );
    expect(shortIdx.length).toBeGreaterThan(queries.length / 2);
    const viaSetVarint = new Int32Array(queries.length);
    let j = 0;
    short.forEach((isShort, k) => {
      if (isShort) viaSetVarint[k] = viaShort[j++]!;
    });
    const viaLinearSet = new PcTableSet(fromLinear).lookupMany(tableIndex, pcs, { outside: OUTSIDE });
    const byTable = new Map<number, number[]>();
    queries.forEach((q, k) => byTable.set(q.rec, [...(byTable.get(q.rec) ?? []), k]));
    const viaTable = new Int32Array(queries.length);
    for (const [rec, ks] of byTable) {
      const got = built[rec]!.lookupMany(
        Uint32Array.from(ks, (k) => pcs[k]!),
        { outside: OUTSIDE },
      );
      ks.forEach((k, j) => (viaTable[k] = got[j]!));
    }
    queries.forEach((q, k) => {
      const expected = q.value ?? OUTSIDE;
      if (viaSet[k] !== expected) say(k, 'set lookupMany', viaSet[k]);
      if (tables[q.rec]!.runs <= 20_000 && viaSetVarint[k] !== expected)
        say(k, 'set lookupVarintMany', viaSetVarint[k]);
      if (viaLinearSet[k] !== expected) say(k, 'fromLinear set lookupMany', viaLinearSet[k]);
      if (viaTable[k] !== expected) say(k, 'table lookupMany', viaTable[k]);
    });
    expect(problems.slice(0, 5)).toEqual([]);
    expect(problems.length).toBe(0);
  });

  it('refuses a batch with an outside PC unless told what to write there', () => {
    const q = queries.find((x) => x.why === 'outside')!;
    let caught: unknown;
    try {
      built[q.rec]!.lookupMany(new Uint32Array([0, q.pc]));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProfpackError);
    expect((caught as ProfpackError).code).toBe(ErrorCode.PCTABLE_PC_OUT_OF_RANGE);
    expect((caught as ProfpackError).details).toEqual({ index: 1, pc: q.pc });
  });
});

describe('pcdata index widths', () => {
  it('bigfunc_amd64 has the u32 chunk index (main.big pcline and pcdata2) and the others u8/u16', () => {
    const widthsOf = (set: string): Set<number> => {
      const tables = readJsonLines<TableRecord>(`${set}.tables.jsonl`);
      return new Set(tables.map((t) => PcTable.fromVarint(base64Bytes(t.b64), { quantum: t.quantum }).indexWidth));
    };
    expect([...widthsOf('bigfunc_amd64')].sort()).toContain(4);
    const hello = widthsOf('hello_amd64');
    expect(hello.has(4)).toBe(false);
    expect(hello.has(1) && hello.has(2) && hello.has(0)).toBe(true);
  });
});
