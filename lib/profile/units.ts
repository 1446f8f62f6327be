/**
 * Sample types and units: the types profpack writes itself, choosing the
 * column a query reads, and values printed in their unit.
 */
import { ErrorCode, ProfpackError } from '../errors';
import type { ProfileMeta, SampleType } from './types';

/** The types a sampling profiler measures (pprof's and Go's names). */
export const SampleTypes = {
  samples: { type: 'samples', unit: 'count' },
  cpu: { type: 'cpu', unit: 'nanoseconds' },
  wall: { type: 'wall', unit: 'nanoseconds' },
} as const satisfies Record<string, SampleType>;

export function sampleTypeName(t: SampleType): string {
  return `${t.type}/${t.unit}`;
}

/** Nanoseconds per unit for the time units profiles use; undefined for others. */
export function nanosPerUnit(unit: string): number | undefined {
  switch (unit) {
    case 'nanoseconds':
    case 'nanosecond':
    case 'ns':
      return 1;
    case 'microseconds':
    case 'microsecond':
    case 'us':
      return 1e3;
    case 'milliseconds':
    case 'millisecond':
    case 'ms':
      return 1e6;
    case 'seconds':
    case 'second':
    case 's':
      return 1e9;
    default:
      return undefined;
  }
}

/**
 * The value column a query reads: `wanted` by type name ("alloc_space"),
 * "type/unit" or index; by default the profile's default type.
 */
export function chooseSampleType(meta: ProfileMeta, wanted?: string | number): number {
  const types = meta.sampleTypes;
  if (wanted === undefined) return meta.defaultSampleType;
  const names = types.map(sampleTypeName).join(', ');
  const i =
    typeof wanted === 'number'
      ? Number.isInteger(wanted) && wanted >= 0 && wanted < types.length
        ? wanted
        : -1
      : types.findIndex((t) => t.type === wanted || sampleTypeName(t) === wanted);
  if (i < 0) {
    throw new ProfpackError(`the profile has no sample type "${wanted}" (it has ${names})`, {
      code: ErrorCode.CONVERT_SAMPLE_TYPE,
      expected: names,
    });
  }
  return i;
}

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
const TIME_UNITS: [number, string][] = [
  [1e9, 's'],
  [1e6, 'ms'],
  [1e3, 'µs'],
  [1, 'ns'],
];

function trim(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0).replace(/\.?0+$/, '');
}

/** A value for people: bytes as B/KB/MB/GB (1024), times as ns/µs/ms/s, counts as they are. */
export function formatValue(value: number, unit: string): string {
  if (unit === 'bytes') {
    let v = Math.abs(value);
    let k = 0;
    while (v >= 1024 && k < BYTE_UNITS.length - 1) {
      v /= 1024;
      k++;
    }
    return `${value < 0 ? '-' : ''}${trim(v)}${BYTE_UNITS[k]}`;
  }
  const ns = nanosPerUnit(unit);
  if (ns !== undefined) {
    const total = value * ns;
    const a = Math.abs(total);
    for (const [scale, name] of TIME_UNITS) if (a >= scale || scale === 1) return `${trim(total / scale)}${name}`;
  }
  return Number.isInteger(value) ? String(value) : trim(value);
}

/**
 * The column that counts samples (samples/count, Datadog's sample/count), if
 * the profile has one: a record of a tick stream may stand for a run of
 * ticks, so "how many samples" is this column's sum, not the record count.
 */
export function sampleCountColumn(meta: Pick<ProfileMeta, 'sampleTypes'>): number {
  return meta.sampleTypes.findIndex((t) => (t.type === 'samples' || t.type === 'sample') && t.unit === 'count');
}

/**
 * The column a time-axis view shows by default: a tick stream's default is
 * its samples/count column, but beside it a time column (wall or cpu
 * nanoseconds: each tick's real time) says how long — what pprof's and
 * speedscope's readers show first. Any other profile: its default type.
 */
export function timeColumnOrDefault(meta: ProfileMeta): number {
  const d = meta.defaultSampleType;
  if (d !== sampleCountColumn(meta)) return d;
  const time = meta.sampleTypes.findIndex(
    (t) => (t.type === 'wall' || t.type === 'cpu') && nanosPerUnit(t.unit) !== undefined,
  );
  return time < 0 ? d : time;
}
