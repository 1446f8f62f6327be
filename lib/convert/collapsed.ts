/**
 * Collapsed stacks (Brendan Gregg's stackcollapse output, read by
 * flamegraph.pl and speedscope): one line per distinct stack,
 * `outer;...;inner COUNT`, in first-seen order.
 *
 * Frames are labelled `funcname (filename:lineno)`. The format has no
 * escaping, so ';' and line breaks inside a label become ':' and ' '. With
 * more than one thread each stack starts with a `thread ID` frame (as
 * py-spy's --threads does). Time and status are not kept. A label is split
 * at its last ` (`, so a filename holding '(' or a name holding ` (` (with no
 * filename) reads back split there: the format cannot say otherwise.
 */
import { ANONYMOUS, MemoryProfile, frameLabel, threadKey, parseThreadKey, type ProfileSource } from './model';

function clean(label: string): string {
  return label.replace(/;/g, ':').replace(/[\r\n]/g, ' ');
}

export function toCollapsed(source: ProfileSource): string {
  const counts = new Map<string, number>();
  const threads = new Set<string>();
  const labels: string[] = [];
  const frames = source.frames;
  for (const s of source.samples()) {
    const thread = threadKey(s.threadId, s.interpreterId);
    threads.add(thread);
    let line = thread;
    for (let i = s.stack.length - 1; i >= 0; i--) {
      const f = s.stack[i]!;
      line += ';' + (labels[f] ??= clean(frameLabel(frames[f]!)));
    }
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  const withThreads = threads.size > 1;
  let out = '';
  for (const [line, count] of counts) {
    const cut = line.indexOf(';');
    const thread = cut < 0 ? line : line.slice(0, cut);
    const stack = cut < 0 ? '' : line.slice(cut + 1);
    const full = withThreads ? (stack === '' ? `thread ${thread}` : `thread ${thread};${stack}`) : stack;
    out += `${full} ${count}\n`;
  }
  return out;
}

const LABEL = /^(.*) \((.*?)(?::(-?\d+))?\)$/;
const THREAD = /^thread (\d+(?:@\d+)?)$/;

/**
 * Collapsed stacks → model: each count becomes that many samples, one
 * interval apart per thread (the format keeps no time).
 */
export function fromCollapsed(text: string, sampleIntervalUs = 1000n): MemoryProfile {
  const out = new MemoryProfile({ startTimeUs: 0n, sampleIntervalUs });
  const clock = new Map<string, bigint>();
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (line === '') continue;
    const space = line.lastIndexOf(' ');
    const count = space < 0 ? NaN : Number(line.slice(space + 1));
    if (!Number.isInteger(count) || count < 0) continue;
    const parts = line.slice(0, space) === '' ? [] : line.slice(0, space).split(';');
    let thread = '0';
    const threadMatch = parts.length > 0 ? THREAD.exec(parts[0]!) : null;
    if (threadMatch !== null) {
      thread = threadMatch[1]!;
      parts.shift();
    }
    const stack = parts.reverse().map((label) => {
      const m = LABEL.exec(label);
      const funcname = m === null ? label : m[1] === ANONYMOUS ? '' : m[1]!;
      return out.internFrame({
        filename: m === null ? '' : m[2]!,
        funcname,
        lineno: m?.[3] === undefined ? null : Number(m[3]),
        endLineno: null,
        column: null,
        endColumn: null,
        opcode: null,
      });
    });
    const { threadId, interpreterId } = parseThreadKey(thread);
    let t = clock.get(thread) ?? 0n;
    for (let k = 0; k < count; k++) {
      t += sampleIntervalUs;
      out.writeStack(threadId, interpreterId, t, 0, stack);
    }
    clock.set(thread, t);
  }
  return out;
}
