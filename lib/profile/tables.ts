/**
 * The interning tables a profile's samples point into: frames (deduplicated
 * on all seven fields), threads (by id and interpreter) and label sets (by
 * content; set 0 is the empty set). Each is append-only, so ids handed out
 * stay valid while a streaming source grows them.
 */
import { StackTable } from './stack-table';
import type { Frame, Label, ThreadRef } from './types';

export function frameKey(f: Frame): string {
  return (
    `${f.filename}\u0000${f.funcname}\u0000${f.lineno}\u0000` +
    `${f.endLineno}\u0000${f.column}\u0000${f.endColumn}\u0000${f.opcode}`
  );
}

/**
 * A frame's file, one spelling per script whatever named it: a `file:` URL (V8's CPU profiler, ES modules) is
 * its path with percent-escapes decoded, as V8's heap profiler, Datadog and CPython name files. Other URLs
 * (`node:internal/…`, `http:`, `file://host/…`) stay as written.
 */
export function scriptPath(file: string): string {
  if (!file.startsWith('file:')) return file;
  try {
    const url = new URL(file);
    return url.host === '' || url.host === 'localhost' ? decodeURIComponent(url.pathname) : file;
  } catch {
    return file; // not a URL after all (or a bad escape): as written
  }
}

/** Frames by content; every reader interns through it, so a frame's file is its scriptPath(). */
export class FrameTable {
  readonly list: Frame[] = [];
  private readonly ids = new Map<string, number>();

  intern(given: Frame): number {
    const filename = scriptPath(given.filename);
    const frame = filename === given.filename ? given : { ...given, filename };
    const key = frameKey(frame);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.list.length;
      this.list.push({ ...frame });
      this.ids.set(key, id);
    }
    return id;
  }
}

/** A thread's identity in Tachyon: (thread_id, interpreter_id), written "ID" or "ID@INTERPRETER". */
export function threadKey(threadId: bigint, interpreterId: number): string {
  return interpreterId === 0 ? threadId.toString() : `${threadId}@${interpreterId}`;
}

export function parseThreadKey(key: string): { threadId: bigint; interpreterId: number } {
  const at = key.indexOf('@');
  if (at < 0) return { threadId: BigInt(key), interpreterId: 0 };
  return { threadId: BigInt(key.slice(0, at)), interpreterId: Number(key.slice(at + 1)) };
}

export class ThreadTable {
  readonly list: ThreadRef[] = [];
  private readonly ids = new Map<string, number>();

  intern(threadId: bigint, interpreterId = 0, name?: string): number {
    const key = threadKey(threadId, interpreterId);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.list.length;
      this.list.push(name === undefined ? { threadId, interpreterId } : { threadId, interpreterId, name });
      this.ids.set(key, id);
    } else if (name !== undefined && this.list[id]!.name === undefined) {
      this.list[id]!.name = name;
    }
    return id;
  }

  /** The index of a thread key ("ID" or "ID@INTERPRETER"), if the table has it. */
  find(key: string): number | undefined {
    return this.ids.get(key);
  }
}

const labelValue = (l: Label): string => (l.str !== undefined ? `s${l.str}` : l.num !== undefined ? `n${l.num}` : '-');

/** A label set's identity: every field, a string label's unit included, and "neither" apart from any value. */
function labelKey(labels: readonly Label[]): string {
  return labels.map((l) => `${l.key}\u0001${labelValue(l)}\u0001${l.unit ?? ''}`).join('\u0000');
}

/** The distinct keys of some label sets, in first-seen order. */
export function labelKeys(sets: Iterable<readonly Label[]>): string[] {
  const keys = new Set<string>();
  for (const set of sets) for (const label of set) keys.add(label.key);
  return [...keys];
}

export class LabelSets {
  readonly list: (readonly Label[])[] = [[]];
  private readonly ids = new Map<string, number>([['', 0]]);

  intern(labels: readonly Label[]): number {
    if (labels.length === 0) return 0;
    const key = labelKey(labels);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.list.length;
      this.list.push(labels.map((l) => ({ ...l })));
      this.ids.set(key, id);
    }
    return id;
  }
}

/**
 * A source's own tables (ProfileBuilder, the Tachyon and pprof readers): it fills them through the protected
 * tables, and ProfileSource's `stacks`, `frames`, `threads` and `labelSets` read them.
 */
export abstract class SourceTables {
  readonly stacks = new StackTable();
  protected readonly frameTable = new FrameTable();
  protected readonly threadTable = new ThreadTable();
  protected readonly labelTable = new LabelSets();

  get frames(): readonly Frame[] {
    return this.frameTable.list;
  }

  get threads(): readonly ThreadRef[] {
    return this.threadTable.list;
  }

  get labelSets(): readonly (readonly Label[])[] {
    return this.labelTable.list;
  }
}
