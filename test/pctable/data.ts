/** Readers for ../shared/data/pcdata (JSON Lines, gzipped for compile), read in place. */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { sharedPath } from '../support/environment';

export interface TableRecord {
  i: number;
  fn: number;
  name: string;
  kind: string;
  size: number;
  quantum: number;
  off: number;
  runs: number;
  b64: string;
}
export interface LinearRecord {
  rec: number;
  size: number;
  quantum: number;
  chunks: number;
  kind: string;
  lin: string;
}
export interface QueryRecord {
  rec: number;
  kind: string;
  pc: number;
  value: number | null;
  start: number;
  end: number;
  why: 'random' | 'edge' | 'chunk' | 'run' | 'outside';
}

export function pcdataPath(file: string): string {
  return sharedPath('data', 'pcdata', file);
}

export function readJsonLines<T>(file: string): T[] {
  const raw = readFileSync(pcdataPath(file));
  const text = file.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => JSON.parse(line) as T);
}

export function base64Bytes(b64: string): Uint8Array {
  const buf = Buffer.from(b64, 'base64');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}
