/** `profpack info` for a file that is not Tachyon: what it is and what it measures. */
import { adapterFor, openProfile, type FormatName } from '../formats/index';
import { formatValue, isEpochUs, sampleTypeName } from '../profile/index';

export function profileInfoLines(file: string, format: FormatName): string[] {
  const source = openProfile(file, { format });
  try {
    const meta = source.meta;
    const totals = meta.sampleTypes.map(() => 0);
    let records = 0;
    let first = Infinity;
    let last = -Infinity;
    const labelKeys = new Set<string>();
    const seenSets = new Set<number>();
    for (const b of source.batches()) {
      records += b.length;
      for (let v = 0; v < totals.length; v++) {
        const col = b.values[v]!;
        let sum = 0;
        for (let i = 0; i < b.length; i++) sum += col[i]!;
        totals[v]! += sum;
      }
      for (let i = 0; i < b.length; i++) {
        const t = b.time[i]!;
        if (t < first) first = t;
        if (t > last) last = t;
        const set = b.labels[i]!;
        if (set !== 0 && !seenSets.has(set)) {
          seenSets.add(set);
          for (const l of source.labelSets[set]!) labelKeys.add(l.key);
        }
      }
    }
    const start = meta.startTimeUs;
    const epoch = isEpochUs(start)
      ? new Date(Number(start / 1000n)).toISOString()
      : `${start} us (the source's own clock)`;
    const lines = [
      `file:         ${file}`,
      `format:       ${adapterFor(format).title}` +
        `${meta.origin?.producer === undefined ? '' : `, written by ${meta.origin.producer}`}`,
      `start:        ${start === 0n ? 'not stated' : epoch}`,
    ];
    if (meta.durationUs !== undefined) lines.push(`duration:     ${(Number(meta.durationUs) / 1e6).toFixed(3)} s`);
    if (meta.periodType !== undefined && meta.period !== undefined)
      lines.push(`period:       ${formatValue(meta.period, meta.periodType.unit)} of ${meta.periodType.type}`);
    lines.push(
      `samples:      ${records} records` +
        `${Number.isFinite(first) ? `, times over ${((last - first) / 1e6).toFixed(3)} s` : ', no times'}`,
    );
    meta.sampleTypes.forEach((t, k) => {
      lines.push(
        `${k === 0 ? 'types:' : '      '}        ` +
          `${sampleTypeName(t)}${k === meta.defaultSampleType ? ' (default)' : ''}` +
          `: total ${formatValue(totals[k]!, t.unit)}`,
      );
    });
    lines.push(
      `threads:      ${source.threads.length}${
        source.threads.some((t) => t.name !== undefined)
          ? ` (${source.threads
              .filter((t) => t.name !== undefined)
              .map((t) => t.name)
              .slice(0, 5)
              .join(', ')})`
          : ''
      }`,
    );
    lines.push(`frames:       ${source.frames.length}`);
    lines.push(`labels:       ${labelKeys.size === 0 ? 'none' : [...labelKeys].join(', ')}`);
    return lines;
  } finally {
    source.close();
  }
}
