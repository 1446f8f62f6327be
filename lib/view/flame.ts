/** `renderFlameHtml()` / `flame()`: a profile as one self-contained flame graph and timeline page. */
import { statSync } from 'node:fs';
import { refuseInputAsOutput, writeFileAtomic } from '../output-file';
import * as path from 'node:path';
import { openProfile, type FormatName } from '../formats/index';
import { listProfileFiles, openProfiles } from '../fleet/index';
import { formatValue, sampleTypeName, type Frame, type ProfileSource } from '../profile/index';
import { withMappedFrames } from '../sourcemap/index';
import { renderPage } from './html';
import { buildViewData, type ViewDataOptions } from './tree';

export interface FlameOptions extends ViewDataOptions {
  /** The page's title (default: "profpack flame graph"). */
  title?: string;
  /** Each frame as the page shows it (source maps: lib/sourcemap). */
  mapFrame?: (frame: Frame) => Frame;
}

export interface FlameSummary {
  output: string;
  samples: number;
  threads: number;
  nodes: number;
  buckets: number;
  bytes: number;
}

/** The page for a profile source (read once, streaming). */
export function renderFlameHtml(
  source: ProfileSource,
  options: FlameOptions = {},
): { html: string; samples: number; threads: number; nodes: number; buckets: number } {
  const data = buildViewData(source, options);
  const spanMs = (data.bucketCount * data.bucketUs) / 1000;
  const summary =
    `${sampleTypeName(data.sampleType)} ${formatValue(data.total, data.sampleType.unit)} ` +
    `in ${data.samples.toLocaleString('en')} samples, ` +
    `${data.threads.length} thread${data.threads.length === 1 ? '' : 's'}, ${spanMs.toLocaleString('en')} ms in ` +
    `${data.bucketCount} buckets of ${data.bucketUs / 1000} ms; ${data.parent.length.toLocaleString('en')} stack nodes`;
  const html = renderPage({
    kind: 'flame',
    title: options.title ?? 'profpack flame graph',
    summary,
    columns: ['self', 'self%', 'total', 'total%', 'function', 'file:line'],
    data: { kind: 'flame', ...data },
  });
  return {
    html,
    samples: data.samples,
    threads: data.threads.length,
    nodes: data.parent.length,
    buckets: data.bucketCount,
  };
}

/**
 * Reads `input` (any format `openProfile` reads) and writes its page to `output`.
 * Many files, or a directory of them, are one profile: their samples aggregated
 * as `profpack top` aggregates them (openProfiles: threads of different files
 * kept apart, times from the earliest file's start).
 */
export function flame(
  input: string | readonly string[],
  output: string,
  options: FlameOptions & { from?: FormatName } = {},
): FlameSummary {
  const files = listProfileFiles(typeof input === 'string' ? [input] : input);
  refuseInputAsOutput(output, files);
  const source = withMappedFrames(
    files.length === 1 ? openProfile(files[0]!, { format: options.from }) : openProfiles(files),
    options.mapFrame,
  );
  const name = files.length === 1 ? path.basename(files[0]!) : `${files.length} profiles`;
  try {
    const page = renderFlameHtml(source, { title: options.title ?? `${name} — profpack flame graph`, ...options });
    writeFileAtomic(output, page.html);
    return {
      output,
      samples: page.samples,
      threads: page.threads,
      nodes: page.nodes,
      buckets: page.buckets,
      bytes: statSync(output).size,
    };
  } finally {
    source.close();
  }
}
