/**
 * A .cpuprofile file whose records are read once, in order (convert to
 * pprof), streamed: the byte scan reads the call tree and only counts
 * `samples` and `timeDeltas` (the two lists at the end of what V8 writes,
 * 16 bytes a record kept by the held read), then `batches()` reads the two
 * lists again side by side, each through a window of its own. Memory grows
 * with nodes and distinct stacks, not with samples.
 *
 * The records are those of the held read (cpuprofile.ts, one model:
 * cpuprofile-model.ts), in the same order with the same values: the median
 * gap from the gaps counted by value (GapCounts), a record's wall time the
 * gap to the next one (gapsToNext of one thread: one record held back), the
 * hot lines of positionTicks handed out in sample order (NodeLines, time
 * order when no delta is negative). What this cannot hold to (stacks under
 * more than one thread, positionTicks with a negative delta, a delta that is
 * not finite, anything the scan does not take) is left to the held read: the
 * reader answers undefined. So are profiles of at most MAX_KEPT_RECORDS
 * records, whose lists the scan keeps: for them a second read of the lists
 * costs more CPU than holding them (bench/RESULTS.md).
 */
import { ErrorCode, ProfpackError } from '../../errors';
import { closeInput, inputChange, openInput, type InputFile } from '../../input';
import { BATCH_ROWS, newBatch, type ProfileSource, type SampleBatch } from '../../profile/index';
import { NodeLines } from '../../v8/index';
import { readJsonShape } from '../io';
import { EXPECTED, WHAT, type CpuColumns } from './cpuprofile-columns';
import { badDelta, badSample, checkTime, cpuModel, type CpuModel } from './cpuprofile-model';
import { ListNumbers, type CountedNumbers, type SampledIds } from './cpuprofile-lists';
import { MAX_KEPT_RECORDS, scanCpuProfileLists, type ScannedLists } from './cpuprofile-scan';

/**
 * The profile at `path` as a source that streams its records; its columns when it has at most `keep` records
 * (MAX_KEPT_RECORDS: the held read takes them); undefined when only the held read can take it.
 * `windowBytes`: each window's size to start (the scan's, then each list's).
 */
export function readCpuProfileStreamed(
  path: string,
  windowBytes = 1 << 20,
  keep = MAX_KEPT_RECORDS,
): ProfileSource | CpuColumns | undefined {
  const file = openInput(path);
  try {
    const scanned = scanCpuProfileLists(file, windowBytes, keep);
    if (scanned !== undefined && !('tree' in scanned)) {
      closeInput(file);
      return scanned;
    }
    if (scanned === undefined || !scanned.deltas.finite) return close(file);
    if (scanned.tree.lineTicks !== undefined && !scanned.deltas.ordered) return close(file);
    const { samples, deltas } = scanned;
    const model = readJsonShape(WHAT, EXPECTED, () =>
      cpuModel(scanned.tree, samples.length, deltas.length, () =>
        deltas.gaps!.median((visit) => {
          const again = new ListNumbers(deltas, file, windowBytes);
          for (let i = 0; i < deltas.length; i++) visit(again.read());
        }),
      ),
    );
    if (!oneThread(model, samples.ids!)) return close(file);
    return new StreamedCpuProfile(file, scanned, model, windowBytes);
  } catch (err) {
    closeInput(file);
    throw err;
  }
}

function close(file: InputFile): undefined {
  closeInput(file);
  return undefined;
}

/**
 * Whether the samples are of one thread (a .cpuprofile holds one; profpack writes one, its stacks under a thread
 * node beside the root): every node a root reaches is of one thread, or else every node sampled. A sample of a
 * node no root reaches is the records' error to name.
 */
function oneThread(model: CpuModel, sampled: SampledIds): boolean {
  const { threadOf, index } = model;
  let thread = -1;
  for (let k = 0; k < threadOf.length; k++) {
    const t = threadOf[k]!;
    if (t === -1 || t === thread) continue;
    if (thread !== -1) {
      thread = -2;
      break;
    }
    thread = t;
  }
  if (thread !== -2) return true;
  if (!sampled.all) return false;
  thread = -1;
  for (let id = 0; id < sampled.bits.length; id++) {
    if (sampled.bits[id] === 0) continue;
    const k = index(id);
    const t = k < 0 ? -1 : threadOf[k]!;
    if (t === -1 || t === thread) continue;
    if (thread !== -1) return false;
    thread = t;
  }
  return true;
}

class StreamedCpuProfile implements ProfileSource {
  readonly sampleCount: number;
  private readonly samples: CountedNumbers;
  private readonly deltas: CountedNumbers;
  private readonly lineTicks: Record<number, number[]> | undefined;

  constructor(
    private readonly file: InputFile,
    scanned: ScannedLists,
    private readonly model: CpuModel,
    private readonly windowBytes: number,
  ) {
    this.samples = scanned.samples;
    this.deltas = scanned.deltas;
    this.lineTicks = scanned.tree.lineTicks;
    this.sampleCount = scanned.samples.length;
  }

  get meta() {
    return this.model.out.meta;
  }
  get frames() {
    return this.model.out.frames;
  }
  get stacks() {
    return this.model.out.stacks;
  }
  get threads() {
    return this.model.out.threads;
  }
  get labelSets() {
    return this.model.out.labelSets;
  }

  close(): void {
    closeInput(this.file);
  }

  *batches(): Iterable<SampleBatch> {
    const { index, stackOf, threadOf, statusOf, startUs, nominalUs, statuses } = this.model;
    const n = this.sampleCount;
    this.unchanged();
    const samples = new ListNumbers(this.samples, this.file, this.windowBytes);
    const deltas = new ListNumbers(this.deltas, this.file, this.windowBytes);
    const lines = this.lineTicks === undefined ? undefined : new NodeLines(this.lineTicks);
    const batch = newBatch(BATCH_ROWS, 2);
    const [counts, walls] = batch.values as [Float64Array, Float64Array];
    counts.fill(1);
    const ids = new Float64Array(BATCH_ROWS);
    const gaps = new Float64Array(BATCH_ROWS);
    // A record waits for the next one, whose time gives its wall time (gapsToNext of one thread).
    let stack = 0;
    let status = 0;
    let thread = 0;
    let heldUs = 0;
    let lastGap = 0;
    let time = startUs;
    /** The held record as the batch's next row, `gapUs` its wall time; returns the batch's rows. */
    const putHeld = (gapUs: number): number => {
      const r = batch.length++;
      batch.stack[r] = stack;
      batch.thread[r] = thread;
      batch.time[r] = heldUs;
      batch.status[r] = status;
      walls[r] = Math.round(gapUs * 1000);
      return batch.length;
    };
    for (let from = 0; from < n; from += BATCH_ROWS) {
      const m = Math.min(BATCH_ROWS, n - from);
      samples.readMany(ids, m);
      deltas.readMany(gaps, m);
      for (let j = 0; j < m; j++) {
        const i = from + j;
        const id = ids[j]!;
        const k = index(id);
        if (k < 0 || threadOf[k] === -1) throw badSample(i, id, k);
        const delta = gaps[j]!;
        if (!Number.isFinite(delta)) throw badDelta(i);
        time += delta;
        checkTime(i, time);
        if (i > 0) {
          lastGap = Math.max(0, time - heldUs);
          if (putHeld(lastGap) === BATCH_ROWS) {
            yield batch;
            batch.length = 0;
          }
        }
        // ToUint32, as the held read's Uint32Array of lines has it.
        const line = lines === undefined ? 0 : lines.line(k) >>> 0;
        stack = line > 0 && stackOf[k] !== 0 ? this.model.hotStack(stackOf[k]!, line) : stackOf[k]!;
        status = Number(statuses?.[i] ?? statusOf[k]) & 0xff;
        thread = threadOf[k]!;
        heldUs = time;
      }
    }
    if (n > 0) putHeld(nominalUs > 0 ? nominalUs : lastGap);
    if (batch.length > 0) yield batch;
  }

  /** The file as the scan read it (inputChange): its lists are read again. */
  private unchanged(): void {
    const change = inputChange(this.file);
    if (change !== null)
      throw new ProfpackError(`the .cpuprofile changed while it was read (${change}): ${this.file.path}`, {
        code: ErrorCode.TACHYON_FILE_CHANGED,
        details: { path: this.file.path, change },
      });
  }
}
