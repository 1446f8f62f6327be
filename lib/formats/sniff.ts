/**
 * Sniffing helpers for the first 4 KiB of a file: the text and the keys a
 * JSON head shows (gzip is undone first, gzip.ts). Adapters' detect and
 * refuse.ts share them.
 */

export const HEAD_BYTES = 4096;

export function headText(head: Uint8Array): string {
  return Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, HEAD_BYTES)).toString('utf8');
}

export function firstNonSpace(head: Uint8Array): number {
  let i = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) i = 3; // UTF-8 BOM
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) i++;
  return i;
}

/**
 * The object keys seen in a JSON head ("nodes", "callFrame"…), or undefined
 * when the head does not start a JSON object. A key is a string followed by
 * a colon; values that merely look like keys inside strings are rare enough
 * in profile heads to ignore.
 */
export function detectJsonKeys(head: Uint8Array): Set<string> | undefined {
  const at = firstNonSpace(head);
  if (head[at] !== 0x7b /* { */) return undefined;
  const next = head[firstNonSpace(head.subarray(at + 1)) + at + 1];
  // marshal's dict also starts with "{" (pstats): JSON's next byte is '"' or '}'.
  if (next !== undefined && next !== 0x22 && next !== 0x7d) return undefined;
  const keys = new Set<string>();
  for (const m of headText(head.subarray(at)).matchAll(/"((?:[^"\\]|\\.){1,64})"\s*:/g)) keys.add(m[1]!);
  return keys;
}
