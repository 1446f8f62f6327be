/**
 * What the recorded program and its writer process say besides the pipe: the settings, one JSON argument
 * (bigints as decimal strings), and the lines the writer answers on stdout ('ready', `error: {code, message}`,
 * one `file {path, stats}` per finished file of a rotating recording, the summary as JSON).
 */
import type { OnFile, RotateOptions } from '../settings/index';

export interface WriterProcessSettings {
  out: string;
  intervalUs: number;
  /** Absent: the writer process's default (zstd, or none where zstd cannot be written). */
  compression?: 'zstd' | 'none';
  startTimeUs: bigint;
  epochOffsetUs: bigint;
  rotate?: RotateOptions;
  flushIntervalMs?: number;
  /** Frames of compiled scripts written at their source-mapped position (default true). */
  sourceMaps?: boolean;
  /** The file holds the heap events (RecordingHostOptions.heap). */
  heap?: boolean;
}

export function encodeWriterSettings(settings: WriterProcessSettings): string {
  return JSON.stringify({
    ...settings,
    startTimeUs: String(settings.startTimeUs),
    epochOffsetUs: String(settings.epochOffsetUs),
  });
}

export function decodeWriterSettings(text: string): WriterProcessSettings {
  const raw = JSON.parse(text) as Omit<WriterProcessSettings, 'startTimeUs' | 'epochOffsetUs'> & {
    startTimeUs: string;
    epochOffsetUs: string;
  };
  return { ...raw, startTimeUs: BigInt(raw.startTimeUs), epochOffsetUs: BigInt(raw.epochOffsetUs) };
}

/** A writer process's stdout line about a finished file of a rotating recording. */
export const FILE_LINE = 'file ';

export function encodeFileLine(path: string, stats: Parameters<OnFile>[1]): string {
  return `${FILE_LINE}${JSON.stringify({ path, stats })}\n`;
}
