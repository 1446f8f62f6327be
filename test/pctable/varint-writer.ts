/**
 * A test-side writer of Go varint-delta tables, from the documented rules
 * (cmd/internal/obj funcpctab, ../shared/notes/go-pcvalue.md): per run the
 * zigzag varint of (value - previous value) from -1, then the uvarint run
 * length in quanta; then one 0x00.
 */
import { uleb128 } from '../support/reference-leb128';

export interface RunSpec {
  value: number;
  /** Run length in PC quanta (>= 1). */
  quanta: number;
}

function pushUvarint(out: number[], value: number): void {
  out.push(...uleb128(value >>> 0));
}

export function writeVarintTable(runs: readonly RunSpec[]): Uint8Array {
  const out: number[] = [];
  let previous = -1;
  for (const run of runs) {
    const delta = (run.value - previous) | 0;
    pushUvarint(out, ((delta << 1) ^ (delta >> 31)) >>> 0);
    pushUvarint(out, run.quanta);
    previous = run.value;
  }
  out.push(0);
  return Uint8Array.from(out);
}

/** The value at every PC (bytes) of the runs, for quantum q. */
export function expandRuns(runs: readonly RunSpec[], quantum: number): Int32Array {
  const total = runs.reduce((a, r) => a + r.quanta, 0) * quantum;
  const out = new Int32Array(total);
  let pc = 0;
  for (const run of runs) {
    out.fill(run.value, pc, pc + run.quanta * quantum);
    pc += run.quanta * quantum;
  }
  return out;
}
