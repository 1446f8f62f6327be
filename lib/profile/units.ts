/**
 * Sample types and units: the types profpack writes itself, choosing the
 * column a query reads, and values printed in their unit.
 */
import { ErrorCode, ProfpackError } from '../errors';
import type { ProfileMeta, SampleBatch, SampleType } from './types';

/** The types a sampling profiler measures (pprof's and Go's names). */
export const SampleTypes = {
  samples: { type: 'samples', unit: 'count' },
  cpu: { type: 'cpu', unit: 'nanoseconds' },
  wall: { type: 'wall', unit: 'nanoseconds' },
} as const satisfies Record<string, SampleType>;

export function sampleTypeName(t: SampleType): string {
  return `${t.type}/${t.unit}`;
}

/** Nanoseconds per unit for the time units profiles use; undefined for others. Self-contained (see formatValue). */
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

/**
 * A value for people: bytes as B/KB/MB/GB (1024), times as ns/µs/ms/s, counts
 * as they are; three significant digits below 100 of the chosen scale, whole
 * numbers above. It names nothing outside its body but nanosPerUnit: the flame
 * page runs these two very functions, injected as source (lib/view/html.ts).
 */
export function formatValue(value: number, unit: string): string {
  // Only a fraction's zeros go: "230" keeps its zero, "2.50" becomes "2.5".
  const digits = (n: number): string => {
    if (Number.isInteger(n)) return String(n);
    const a = Math.abs(n);
    const s = n.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0);
    return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
  };
  if (unit === 'bytes') {
    const names = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
    let v = Math.abs(value);
    let k = 0;
    while (v >= 1024 && k < names.length - 1) {
      v /= 1024;
      k++;
    }
    return `${value < 0 ? '-' : ''}${digits(v)}${names[k]}`;
  }
  const ns = nanosPerUnit(unit);
  if (ns !== undefined) {
    const total = value * ns;
    const a = Math.abs(total);
    const scales: [number, string][] = [
      [1e9, 's'],
      [1e6, 'ms'],
      [1e3, 'µs'],
      [1, 'ns'],
    ];
    for (const [scale, name] of scales) if (a >= scale || scale === 1) return `${digits(total / scale)}${name}`;
  }
  return digits(value);
}

/**
 * The column that counts samples (samples/count, Datadog's sample/count), if
 * the profile has one: a record of a tick stream may stand for a run of
 * ticks, so "how many samples" is this column's sum, not the record count.
 */
export function sampleCountColumn(meta: Pick<ProfileMeta, 'sampleTypes'>): number {
  return meta.sampleTypes.findIndex((t) => (t.type === 'samples' || t.type === 'sample') && t.unit === 'count');
}

/** The samples a batch holds: its samples/count column's sum (`sampleCountColumn`), or its records when it has none. */
export function batchSamples(b: SampleBatch, countColumn: number): number {
  if (countColumn < 0) return b.length;
  const counts = b.values[countColumn]!;
  let n = 0;
  for (let i = 0; i < b.length; i++) n += counts[i]!;
  return n;
}

/**
 * When a record's last tick is: a record of c ticks (a Tachyon REPEAT run, a version-2 record counting c
 * samples) stands for ticks one interval apart from its time (docs/formats.md, Times).
 */
export function lastTickUs(timeUs: number, ticks: number, intervalUs: number): number {
  return ticks > 1 && Number.isInteger(ticks) ? timeUs + (ticks - 1) * intervalUs : timeUs;
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
