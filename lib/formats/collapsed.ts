/**
 * Collapsed ("folded") stacks, Brendan Gregg's stackcollapse output read by
 * flamegraph.pl and speedscope: one line per stack, `outer;...;inner COUNT`.
 *
 * Read: each line is one record whose value is its count: a weight, never
 * expanded (`stackcollapse-perf.pl` writes summed event periods, austin µs).
 * A count that is negative, fractional, not a number, missing, or past 2^53
 * is refused naming its line. Several numbers after the stack are columns,
 * one sample type each (value1..N/count; austin's -f: see below): the first
 * line sets how many, and a line ending in another number of numbers is
 * refused (`a;b 1 2 3` in a one-column file is never a function "b 1 2").
 *
 * Thread prefixes other tools write are read as threads, not functions:
 *  - py-spy `--threads`: `thread (TID)` / `thread (0x7F…)` / `thread (TID): NAME`,
 *    and `process PID:"CMDLINE"` before it with `--subprocesses` (a pid label);
 *    frames `name (file:line)`;
 *  - CPython 3.15 `profiling.sampling --collapsed`: `tid:N`, frames `file:func:line`;
 *  - austin: `P<pid>;T<tid>` or `P<pid>;T<iid>:<tid>`, frames `module:function:line`
 *    (`-a`: `module:function;L<line>`); its `# mode:` and `# interval:` header
 *    lines give the types: wall (default) or cpu as microseconds, memory as
 *    signed bytes, and full (`-f`: time, idle flag, memory delta per line, with
 *    commas or spaces) as wall/µs, cpu/µs (the time of non-idle samples) and
 *    memory/bytes;
 *  - `stackcollapse-perf.pl --tid`: `comm-PID/TID` (thread TID named comm);
 *  - profpack's own older `thread ID`.
 * Without a prefix every line is thread 0. Sample types otherwise:
 * samples/count (one column).
 *
 * Write: one line per distinct (thread, stack) with the summed value of the
 * chosen sample type (its exact sum rounded to an integer once), streamed in chunks. Frames are
 * `funcname (filename:lineno)` (';' and line breaks in a label become ':' and
 * ' ': the format has no escaping); with several threads each line starts
 * with py-spy's `thread (ID)` or `thread (ID): NAME`.
 */
import {
  ANONYMOUS,
  ExactSums,
  ProfileBuilder,
  SampleTypes,
  frameLabel,
  makeFrame,
  threadKey,
  type Frame,
  type Label,
  type ProfileSource,
  type SampleType,
} from '../profile/index';
import type { FormatAdapter, ReadInput, ReadOptions, WriteOptions, WriteTarget } from './adapter';
import {
  ChunkedText,
  GrowingUints,
  badInput,
  describeType,
  inputBytes,
  negativeValue,
  utf8,
  writtenColumn,
  DroppedLabels,
} from './io';
import { headText } from './sniff';

const WHAT = 'collapsed-stacks file';
const EXPECTED = 'lines "frame;frame;... COUNT" with a whole count of 0 or more';

type Dialect = 'generic' | 'cpython' | 'austin';

/** A line's stack text and its numbers, as text. */
interface SplitLine {
  stack: string;
  numbers: string[];
}

const NUMBER_LIKE = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** The numbers a line ends with (space-separated, or one comma-separated group as austin -f writes). */
function splitTail(line: string, wanted: number): SplitLine {
  const numbers: string[] = [];
  let end = line.length;
  while (numbers.length < wanted) {
    const space = line.lastIndexOf(' ', end - 1);
    const token = line.slice(space + 1, end);
    if (numbers.length === 0 && token.includes(',') && token.split(',').every((t) => NUMBER_LIKE.test(t))) {
      numbers.push(...token.split(','));
      end = Math.max(0, space);
      break;
    }
    if (space < 0 || !NUMBER_LIKE.test(token)) {
      if (numbers.length === 0) numbers.push(space < 0 ? '' : token);
      break;
    }
    numbers.unshift(token);
    end = space;
  }
  return { stack: line.slice(0, end), numbers };
}

/** How many numbers a line ends with (commas count each), up to 8. */
function tailCount(line: string): number {
  const { numbers } = splitTail(line, 8);
  return numbers.every((n) => NUMBER_LIKE.test(n)) ? numbers.length : 0;
}

/** The thread and labels a line's first frames name, and how many frames they took. */
interface Prefix {
  dialect: Dialect;
  skip: number;
  threadId: bigint;
  interpreterId: number;
  threadName?: string;
  labels: Label[];
}

const PYSPY_THREAD = /^thread \((0x[0-9A-Fa-f]+|\d+)(?:@(\d+))?\)(?:: (.*))?$/s;
const OLD_THREAD = /^thread (0x[0-9A-Fa-f]+|\d+)(?:@(\d+))?$/;
const PYSPY_PROCESS = /^process (\d+):"(.*)"$/s;
const CPYTHON_TID = /^tid:(\d+)$/;
const AUSTIN_PROCESS = /^P(\d+)$/;
const AUSTIN_THREAD = /^T(?:(\d+):)?(0x[0-9A-Fa-f]+|[0-9A-Fa-f]+)$/;
// stackcollapse-perf.pl --tid: `COMM-PID/TID`, PID `?` when perf script printed none; COMM's spaces are `_`.
const PERF_TID = /^(.+)-(\d+|\?)\/(\d+)$/s;

function parsePrefix(parts: string[]): Prefix {
  const first = parts[0] ?? '';
  let m = CPYTHON_TID.exec(first);
  if (m !== null) return { dialect: 'cpython', skip: 1, threadId: BigInt(m[1]!), interpreterId: 0, labels: [] };
  m = AUSTIN_PROCESS.exec(first);
  const t = parts.length > 1 ? AUSTIN_THREAD.exec(parts[1]!) : null;
  if (m !== null && t !== null) {
    // austin prints a thread id in hex (with or without 0x) unless it is all digits.
    const raw = t[2]!;
    const threadId =
      raw.startsWith('0x') || /[a-fA-F]/.test(raw) ? BigInt(raw.startsWith('0x') ? raw : `0x${raw}`) : BigInt(raw);
    return {
      dialect: 'austin',
      skip: 2,
      threadId,
      interpreterId: t[1] === undefined ? 0 : Number(t[1]),
      labels: [{ key: 'pid', num: Number(m[1]) }],
    };
  }
  let skip = 0;
  const labels: Label[] = [];
  m = PYSPY_PROCESS.exec(first);
  if (m !== null) {
    labels.push({ key: 'pid', num: Number(m[1]) }, { key: 'process', str: m[2]! });
    skip = 1;
  }
  const at = parts[skip] ?? '';
  m = PYSPY_THREAD.exec(at) ?? OLD_THREAD.exec(at);
  if (m !== null)
    return {
      dialect: 'generic',
      skip: skip + 1,
      threadId: BigInt(m[1]!),
      interpreterId: m[2] === undefined ? 0 : Number(m[2]),
      threadName: m[3],
      labels,
    };
  if (skip === 0) {
    m = PERF_TID.exec(first);
    if (m !== null)
      return {
        dialect: 'generic',
        skip: 1,
        threadId: BigInt(m[3]!),
        interpreterId: 0,
        threadName: m[1],
        labels: m[2] === '?' ? [] : [{ key: 'pid', num: Number(m[2]) }],
      };
  }
  return { dialect: 'generic', skip, threadId: 0n, interpreterId: 0, labels };
}

const LABEL = /^(.*) \((.*?)(?::(\d+))?\)$/s;
const FILE_FUNC_LINE = /^(.*):([^:]*):(\d+)$/s;

/** A frame of a line in its tool's dialect. */
function parseFrame(label: string, dialect: Dialect): Frame {
  // austin -g marks samples taken while CPython's garbage collector ran with a ":GC:" frame.
  if (dialect === 'austin' && label === ':GC:') return makeFrame(label, '');
  if (dialect !== 'generic') {
    const m = FILE_FUNC_LINE.exec(label);
    if (m !== null) return makeFrame(m[2]!, m[1]!, Number(m[3]));
    const two = dialect === 'austin' ? /^(.*):([^:]*)$/s.exec(label) : null;
    if (two !== null) return makeFrame(two[2]!, two[1]!);
    return makeFrame(label, '');
  }
  const m = LABEL.exec(label);
  if (m === null) return makeFrame(label, '');
  return makeFrame(m[1] === ANONYMOUS ? '' : m[1]!, m[2]!, m[3] === undefined ? null : Number(m[3]));
}

interface Header {
  mode?: string;
  intervalUs?: bigint;
}

/** The sample types of a file, from austin's mode or the column count. */
function typesFor(
  austin: boolean,
  mode: string | undefined,
  columns: number,
): { types: SampleType[]; signed: boolean[] } {
  const micros = (type: string): SampleType => ({ type, unit: 'microseconds' });
  if (austin || mode !== undefined) {
    if (columns === 3)
      return {
        types: [micros('wall'), micros('cpu'), { type: 'memory', unit: 'bytes' }],
        signed: [false, false, true],
      };
    if (columns === 1 && mode === 'memory') return { types: [{ type: 'memory', unit: 'bytes' }], signed: [true] };
    if (columns === 1) return { types: [micros(mode === 'cpu' ? 'cpu' : 'wall')], signed: [false] };
  }
  if (columns === 1) return { types: [SampleTypes.samples], signed: [false] };
  return {
    types: Array.from({ length: columns }, (_, i) => ({ type: `value${i + 1}`, unit: 'count' })),
    signed: new Array<boolean>(columns).fill(false),
  };
}

function readCollapsed(bytes: Uint8Array, options: ReadOptions): ProfileBuilder {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const starts = new GrowingUints();
  const ends = new GrowingUints();
  const header: Header = {};
  let columns = 0;
  let austin = false;
  // First pass: where the lines are, austin's header; the first line gives the column count.
  const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  for (let start = bom; start < buf.length;) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    const next = end + 1;
    let stop = end;
    while (stop > start && (buf[stop - 1] === 0x0d || buf[stop - 1] === 0x20 || buf[stop - 1] === 0x09)) stop--;
    if (stop > start) {
      if (buf[start] === 0x23 /* # */) {
        const m = /^#\s*(\w+):\s*(.*)$/.exec(utf8(bytes, start, stop));
        if (m?.[1] === 'mode') header.mode = m[2]!.trim();
        if (m?.[1] === 'interval' && /^\d+$/.test(m[2]!.trim())) header.intervalUs = BigInt(m[2]!.trim());
        if (m?.[1] === 'austin') austin = true;
      } else {
        if (columns === 0) {
          const text = utf8(bytes, start, stop);
          if (/^P\d+;T/.test(text)) austin = true;
          columns = Math.max(1, tailCount(text));
        }
        starts.push(start);
        ends.push(stop);
      }
    }
    start = next;
  }
  if (columns === 0) columns = 1;
  const { types, signed } = typesFor(austin, header.mode, columns);
  const out = new ProfileBuilder({
    sampleTypes: types,
    defaultSampleType: 0,
    startTimeUs: 0n,
    sampleIntervalUs: header.intervalUs ?? options.sampleIntervalUs ?? 1000n,
    origin: { format: 'collapsed', producer: austin ? 'austin' : undefined },
  });
  const austinFull = austin && columns === 3;
  const frameIds: Record<Dialect, Map<string, number>> = { generic: new Map(), cpython: new Map(), austin: new Map() };
  // A line's prefix depends on its first two frames only: parsed once per distinct pair.
  const prefixes = new Map<string, { prefix: Prefix; thread: number; labels: number }>();
  let frames = new Uint32Array(64);
  const values = new Array<number>(columns).fill(0);
  for (let line = 0; line < starts.length; line++) {
    const start = starts.data[line]!;
    const text = utf8(bytes, start, ends.data[line]);
    const fail = (message: string) => badInput(WHAT, `line ${lineNumberAt(buf, start)}: ${message}`, EXPECTED, start);
    const { stack, numbers } = splitTail(text, columns + 1);
    const numeric = numbers.every((n) => NUMBER_LIKE.test(n));
    // A line ending in more or fewer numbers than the first is refused, never read as a function named "b 1 2".
    if (numeric && numbers.length !== columns)
      throw fail(`it ends in ${tailCount(text)} numbers where the first line has ${columns}`);
    for (let c = 0; c < columns; c++) {
      const raw = numbers[c] ?? '';
      if (raw === '' || !NUMBER_LIKE.test(raw))
        throw fail(raw === '' ? 'no count after the stack' : `the count "${raw}" is not a number`);
      const v = Number(raw);
      if (!signed[c] && v < 0) throw fail(`the count ${raw} is negative; a count is 0 or more`);
      if (!Number.isInteger(v)) throw fail(`the count ${raw} is not a whole number`);
      if (Math.abs(v) > Number.MAX_SAFE_INTEGER) throw fail(`the count ${raw} is past 2^53 and cannot be kept exactly`);
      values[c] = v;
    }
    // austin -f: time, idle (1) or not (0), memory delta. CPU time is the time of samples that were not idle.
    if (austinFull) values[1] = values[1] === 0 ? values[0]! : 0;
    const parts = stack === '' ? [] : stack.split(';');
    const pairKey = parts.length < 2 ? (parts[0] ?? '') : `${parts[0]}\u0000${parts[1]}`;
    let known = prefixes.get(pairKey);
    if (known === undefined) {
      const prefix = parsePrefix(parts);
      const thread = out.internThread(prefix.threadId, prefix.interpreterId, prefix.threadName);
      known = { prefix, thread, labels: out.internLabels(prefix.labels) };
      prefixes.set(pairKey, known);
    }
    const { prefix } = known;
    const cache = frameIds[prefix.dialect];
    if (frames.length < parts.length) frames = new Uint32Array(parts.length * 2);
    let depth = 0;
    for (let i = prefix.skip; i < parts.length; i++) {
      const label = parts[i]!;
      // austin -a: "L<line>" frames give the line of the frame before them.
      if (prefix.dialect === 'austin' && depth > 0 && /^L\d+$/.test(label)) {
        frames[depth - 1] = out.internFrame({ ...out.frames[frames[depth - 1]!]!, lineno: Number(label.slice(1)) });
        continue;
      }
      let id = cache.get(label);
      if (id === undefined) {
        id = out.internFrame(parseFrame(label, prefix.dialect));
        cache.set(label, id);
      }
      frames[depth++] = id;
    }
    out.add(out.stacks.internOutermostFirst(frames, depth), known.thread, NaN, 0, values, known.labels);
  }
  return out;
}

function lineNumberAt(buf: Buffer, offset: number): number {
  let n = 1;
  for (let at = buf.indexOf(10); at >= 0 && at < offset; at = buf.indexOf(10, at + 1)) n++;
  return n;
}

function clean(label: string): string {
  return label.replace(/;/g, ':').replace(/[\r\n]/g, ' ');
}

function writeCollapsed(source: ProfileSource, target: WriteTarget, options: WriteOptions): void {
  const column = writtenColumn(source.meta, options.sampleType);
  // Per thread, per stack, a slot of `sums`: each line's value is its exact sum rounded once.
  const slots = new Map<number, Map<number, number>>();
  const sums = new ExactSums();
  let used = 0;
  const dropped = new DroppedLabels();
  for (const b of source.batches()) {
    const values = b.values[column]!;
    for (let i = 0; i < b.length; i++) {
      if (values[i]! < 0) throw negativeValue(WHAT, values[i]!, describeType(source.meta, column), 'flamegraph.pl');
      dropped.note(b.labels[i]!);
      let perStack = slots.get(b.thread[i]!);
      if (perStack === undefined) slots.set(b.thread[i]!, (perStack = new Map()));
      let slot = perStack.get(b.stack[i]!);
      if (slot === undefined) perStack.set(b.stack[i]!, (slot = used++));
      sums.add(slot, values[i]!);
    }
  }
  const withThreads = slots.size > 1;
  const labels: string[] = [];
  const label = (frame: number) => (labels[frame] ??= clean(frameLabel(source.frames[frame]!)));
  const out = new ChunkedText(target);
  for (const [thread, perStack] of slots) {
    let prefix = '';
    if (withThreads) {
      const t = source.threads[thread]!;
      prefix = `thread (${threadKey(t.threadId, t.interpreterId)})${t.name === undefined ? '' : `: ${clean(t.name)}`}`;
    }
    for (const [stack, slot] of perStack) {
      const names = source.stacks.toArray(stack).reverse().map(label);
      if (prefix !== '') names.unshift(prefix);
      out.push(`${names.join(';')} ${sums.rounded(slot)}\n`);
    }
  }
  out.flush();
  dropped.warn(source.labelSets, 'collapsed stacks', options.onWarning);
}

export const collapsedAdapter: FormatAdapter<'collapsed'> = {
  name: 'collapsed',
  title: 'collapsed stacks (folded)',
  label: 'collapsed',
  extensions: ['.collapsed.txt', '.collapsed', '.folded', '.stacks', '.austin'],
  mayBeGzipped: true,
  detect: (head) => {
    if (head.length === 0 || head.includes(0)) return false;
    const text = headText(head);
    if (/^\s*[[{]/.test(text)) return false;
    const lines = text.split('\n');
    // A line cut by the 4 KiB head (deep stacks) still shows its frames.
    if (lines.length === 1) return text.includes(';') && !/[\x00-\x08]/.test(text);
    for (const raw of lines.slice(0, -1)) {
      const line = raw.trimEnd();
      if (line === '') continue;
      if (line.startsWith('#')) continue;
      return (
        / [-+]?[\d.]+(?:[eE][-+]?\d+)?(?:[ ,][-+]?[\d.]+)*$/.test(line) || (/ \S+$/.test(line) && line.includes(';'))
      );
    }
    return false;
  },
  read(input: ReadInput, options: ReadOptions): ProfileSource {
    return readCollapsed(inputBytes(input), options);
  },
  write: writeCollapsed,
};
