/**
 * What `profpack top` prints, read back: the JSON rows keyed as the oracles key them, and the text table's
 * numbers parsed from their printed units (independently of profpack's formatter).
 */
import { NO_STACK } from '../support/oracle';

export interface TopRow {
  key: string;
  funcname: string;
  filename: string;
  lineno: number | null;
  self: number;
  total: number;
}

export interface TopJson {
  total: number;
  samples: number;
  rows: TopRow[];
}

/** Self value per `funcname filename` (the empty stack's row as '(no stack)'). */
export function topRows(json: TopJson): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of json.rows) {
    const key = r.funcname === NO_STACK || r.key === NO_STACK ? NO_STACK : `${r.funcname} ${r.filename}`;
    out.set(key, (out.get(key) ?? 0) + r.self);
  }
  return out;
}

// Times back to nanoseconds; bytes by 1024 (docs/cli.md: B/KB/MB/GB are binary).
const SCALE: Record<string, number> = {
  '': 1,
  ns: 1,
  us: 1e3,
  µs: 1e3,
  ms: 1e6,
  s: 1e9,
  min: 60e9,
  h: 3600e9,
  B: 1,
  KB: 1024,
  MB: 1024 ** 2,
  GB: 1024 ** 3,
  TB: 1024 ** 4,
};

/** A printed value back in the type's unit (nanoseconds for times): `230ms` → 230e6, `1,294` → 1294. */
export function printedValue(cell: string): number {
  const m = /^(-?[\d,]*\.?\d+(?:e[+-]?\d+)?)([a-zµA-Z]*)$/.exec(cell.trim());
  if (m === null || !(m[2]! in SCALE)) throw new Error(`not a printed value: ${JSON.stringify(cell)}`);
  return Number(m[1]!.replace(/,/g, '')) * SCALE[m[2]!]!;
}

/** The text table's self/total columns and the footer's total. */
export function parsePrinted(text: string): { rows: { self: number; total: number }[]; total: number } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = lines.findIndex((l) => /^\s*self\s+self%\s+total\s+total%/.test(l));
  if (header < 0) throw new Error(`no top header in:\n${text}`);
  const rows: { self: number; total: number }[] = [];
  let total = NaN;
  for (const line of lines.slice(header + 1)) {
    const footer = /^[\d,]+ samples.*; \S+ total (\S+)/.exec(line);
    if (footer !== null) {
      total = printedValue(footer[1]!);
      break;
    }
    const cells = line.trim().split(/\s+/);
    rows.push({ self: printedValue(cells[0]!), total: printedValue(cells[2]!) });
  }
  return { rows, total };
}

/** `info`'s `types:` lines: each type's printed total, by `type/unit`. */
export function infoTypeTotals(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^(?:types:)?\s+(\S+\/\S+)(?: \(default\))?: total (\S+)$/gm))
    out.set(m[1]!, printedValue(m[2]!));
  return out;
}
