/**
 * The reference answers of the outside tools, asked of the tools themselves:
 * Go's `go tool pprof` (-raw, -top, -tags) read as text. Nothing here uses
 * profpack code, so a test can hold profpack's answers against these.
 *
 * Go is required (Debian golang-go; scripts/test-tools.sh installs it): a
 * missing `go` throws, so the tests that need it fail rather than skip.
 */
import { execFileSync, type ExecFileSyncOptionsWithStringEncoding } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import * as path from 'node:path';

/** A sample type as profile.proto names it: `{ type: "alloc_space", unit: "bytes" }`. */
export interface SampleType {
  type: string;
  unit: string;
}

/** One value column of `go tool pprof -raw`: its type and the sum over every sample. */
export interface SampleTypeTotal extends SampleType {
  total: number;
}

/** The header `go tool pprof -raw` prints before the samples. */
export interface RawHeader {
  periodType: SampleType | null;
  period: number | null;
  /** `-raw` prints the duration cut to 4 characters (`%.4v`, "2.71" for 2.71xx s): kept as printed. */
  duration: string | null;
  sampleTypes: SampleType[];
  /** The type -raw marks `[dflt]`: the file's default_sample_type, null when it has none. */
  defaultType: string | null;
}

/** `go` on PATH; throws naming what to install when it is not there. */
export function goBinary(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'go');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this PATH entry
    }
  }
  throw new Error('go is not on PATH: install Debian golang-go (scripts/test-tools.sh does it)');
}

/** `go version`, e.g. "go1.19.8". */
export function goVersion(): string {
  const out = execFileSync(goBinary(), ['version'], { encoding: 'utf8' });
  const m = /\bgo version (\S+)/.exec(out);
  if (m === null) throw new Error(`unexpected go version output: ${out}`);
  return m[1]!;
}

/** Runs `go tool pprof ARGS`; stdout, or throws with pprof's stderr. */
export function goPprof(args: string[]): string {
  // No binary lookups: a Go profile names the build's temporary executable, which is gone.
  const env = { ...process.env, PPROF_BINARY_PATH: '/nonexistent', PPROF_TMPDIR: '/nonexistent' };
  try {
    const options: ExecFileSyncOptionsWithStringEncoding = { encoding: 'utf8', env, maxBuffer: 1 << 28, stdio: 'pipe' };
    return execFileSync(goBinary(), ['tool', 'pprof', ...args], options);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`go tool pprof ${args.join(' ')} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}

function parseSampleType(text: string): SampleType {
  const slash = text.indexOf('/');
  if (slash < 0) throw new Error(`not a type/unit pair: ${text}`);
  return { type: text.slice(0, slash), unit: text.slice(slash + 1) };
}

/** `go tool pprof -raw FILE`: the header and, per sample type, the exact sum of its column. */
export function goPprofRaw(file: string): { header: RawHeader; totals: SampleTypeTotal[]; samples: number } {
  const lines = goPprof(['-raw', file]).split('\n');
  const header: RawHeader = { periodType: null, period: null, duration: null, sampleTypes: [], defaultType: null };
  let i = 0;
  for (; i < lines.length && lines[i] !== 'Samples:'; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(': ');
    if (colon < 0) continue;
    const key = line.slice(0, colon);
    const value = line.slice(colon + 2).trim();
    if (key === 'PeriodType') {
      const [type, unit] = value.split(' ');
      header.periodType = { type: type!, unit: unit ?? '' };
    } else if (key === 'Period') header.period = Number(value);
    else if (key === 'Duration') header.duration = value;
  }
  if (i === lines.length) throw new Error(`go tool pprof -raw ${file}: no "Samples:" line`);
  for (const column of lines[i + 1]!.trim().split(/\s+/)) {
    const isDefault = column.endsWith('[dflt]');
    const t = parseSampleType(isDefault ? column.slice(0, -'[dflt]'.length) : column);
    if (isDefault) header.defaultType = t.type;
    header.sampleTypes.push(t);
  }
  const sums = header.sampleTypes.map(() => 0n);
  let samples = 0;
  // A sample line is its values, a colon, then location ids; label lines follow it indented.
  const sampleLine = /^\s*(-?\d+(?:\s+-?\d+)*):(?:\s|$)/;
  for (i += 2; i < lines.length && !lines[i]!.startsWith('Locations'); i++) {
    const m = sampleLine.exec(lines[i]!);
    if (m === null) continue;
    const values = m[1]!.trim().split(/\s+/);
    if (values.length !== sums.length) {
      throw new Error(`-raw sample with ${values.length} values, ${sums.length} types: ${lines[i]}`);
    }
    values.forEach((v, k) => (sums[k]! += BigInt(v)));
    samples++;
  }
  const totals = header.sampleTypes.map((t, k) => {
    const total = Number(sums[k]!);
    if (!Number.isSafeInteger(total)) throw new Error(`${file}: ${t.type} totals ${sums[k]}, beyond 2^53`);
    return { ...t, total };
  });
  return { header, totals, samples };
}

/** Per sample type `{ type, unit, total }`: the sum of each `-raw` value column over all samples. */
export function goPprofRawTotals(file: string): SampleTypeTotal[] {
  return goPprofRaw(file).totals;
}

/** One row of `go tool pprof -top`, values as printed (units formatted by pprof). */
export interface TopRow {
  flat: string;
  cum: string;
  name: string;
  inline: boolean;
}

/** `go tool pprof -top [-sample_index=T] FILE`: the type it shows, its Duration line, and the rows. */
export function goPprofTop(
  file: string,
  sampleIndex?: string,
): { type: string; duration: string | null; rows: TopRow[] } {
  const args = ['-top', ...(sampleIndex === undefined ? [] : [`-sample_index=${sampleIndex}`]), file];
  const lines = goPprof(args).split('\n');
  let type = '';
  let duration: string | null = null;
  const rows: TopRow[] = [];
  let inRows = false;
  for (const line of lines) {
    if (line.startsWith('Type: ')) type = line.slice(6).trim();
    const d = /^Duration: ([^,]+)/.exec(line);
    if (d !== null) duration = d[1]!;
    if (/^\s+flat\s+flat%\s+sum%\s+cum\s+cum%/.test(line)) {
      inRows = true;
      continue;
    }
    if (!inRows || line.trim() === '') continue;
    const m = /^\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.*)$/.exec(line);
    if (m === null) throw new Error(`unexpected -top row: ${line}`);
    const inline = m[3]!.endsWith(' (inline)');
    rows.push({ flat: m[1]!, cum: m[2]!, name: inline ? m[3]!.slice(0, -' (inline)'.length) : m[3]!, inline });
  }
  if (type === '') throw new Error(`go tool pprof ${args.join(' ')}: no "Type:" line`);
  return { type, duration, rows };
}

/**
 * The function named by the first row of `go tool pprof -top -sample_index=T FILE`
 * (the largest flat value), without pprof's " (inline)" mark.
 */
export function goPprofTopFirst(file: string, sampleIndex?: string): string {
  const { rows } = goPprofTop(file, sampleIndex);
  if (rows.length === 0) throw new Error(`go tool pprof -top ${file}: no rows`);
  return rows[0]!.name;
}

/** One label key of `go tool pprof -tags`: its total and each value's share, as printed. */
export interface TagKey {
  key: string;
  total: string;
  /** percent is null where pprof prints none: a key whose total is 0 (its samples weigh 0 in the shown type). */
  values: { value: string; amount: string; percent: string | null }[];
}

/**
 * `go tool pprof -tags [-sample_index=T] FILE`, parsed. Numeric values come as
 * pprof prints them: through float64, so a 19-digit nanosecond timestamp
 * reads rounded (Datadog's end_timestamp_ns 1795705007934870000, exact in -raw,
 * shows as 1795705007934870016).
 */
export function goPprofTags(file: string, sampleIndex?: string): TagKey[] {
  const args = ['-tags', ...(sampleIndex === undefined ? [] : [`-sample_index=${sampleIndex}`]), file];
  const keys: TagKey[] = [];
  for (const line of goPprof(args).split('\n')) {
    if (line.trim() === '') continue;
    const head = /^ (.+): Total (.+)$/.exec(line);
    if (head !== null) {
      keys.push({ key: head[1]!, total: head[2]!.trim(), values: [] });
      continue;
    }
    const row = /^\s+(\S+)(?:\s+\(\s*([^)]+)\))?:\s(.*)$/.exec(line);
    if (row === null || keys.length === 0) throw new Error(`unexpected -tags line: ${line}`);
    keys.at(-1)!.values.push({ amount: row[1]!, percent: row[2]?.trim() ?? null, value: row[3]! });
  }
  return keys;
}
