import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { recognize } from '../../lib/formats/registry';
import { HEAD_BYTES } from '../../lib/formats/sniff';
import { repoRoot, sharedPath } from '../support/environment';

const fixture = (name: string) => readFileSync(path.join(repoRoot, 'test', 'fixtures', 'formats', name));
const outside = (name: string) => readFileSync(sharedPath('data', 'outside', name));
const head = (b: Uint8Array) => b.subarray(0, HEAD_BYTES);

describe('recognize: profiles profpack refuses are named', () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ['CPython --gecko', fixture('cpython-3.15.gecko.json'), /Firefox profiler \(Gecko\)/],
    ['CPython --jsonl', fixture('cpython-3.15.jsonl'), /CPython profiling\.sampling's JSON Lines/],
    ['CPython --pstats', fixture('cpython-3.15.pstats'), /CPython pstats \(marshal\)/],
    [
      'node trace events (traceEvents)',
      fixture('node-20-trace-events.json'),
      /Chrome trace events \(traceEvents JSON\)/,
    ],
    [
      'trace events as a bare array',
      fixture('node-20-trace-events.array.json'),
      /Chrome trace events \(a JSON array of events\)/,
    ],
    [
      'node --prof-process --preprocess',
      fixture('node-20-prof-process-preprocess.head.json'),
      /node --prof-process --preprocess output/,
    ],
    [
      'Go legacy heap text',
      Buffer.from('heap profile: 3: 1024 [9: 4096] @ heap/524288\n1: 512 [3: 1536] @ 0x4a1f 0x4b20\n'),
      /Go legacy text profile \(heap profile\)/,
    ],
    [
      'Go legacy contention text',
      Buffer.from('--- contention:\ncycles/second=2000000000\n100 3 @ 0x1 0x2\n'),
      /Go legacy text profile \(contention\)/,
    ],
    [
      'Go goroutine debug=1 text',
      Buffer.from('goroutine profile: total 6\n2 @ 0x43 0x44\n'),
      /Go legacy text profile \(goroutine\)/,
    ],
    [
      'speedscope evented',
      Buffer.from(
        '{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[{"type":"evented","name":"a","unit":"none","startValue":0,"endValue":0,"events":[]}]}',
      ),
      /speedscope file of "evented" profiles/,
    ],
    [
      'V8 heap snapshot',
      Buffer.from('{"snapshot":{"meta":{"node_fields":["type","name"]},"node_count":1},"nodes":[]}'),
      /V8 heap snapshot/,
    ],
  ];
  for (const [name, bytes, message] of cases) {
    it(name, () => {
      const got = recognize(head(bytes));
      expect(got.format).toBeUndefined();
      expect(got.refused).toMatch(message);
      // The same file gzipped is recognised through the gzip, and says so.
      expect(recognize(head(gzipSync(bytes)))).toEqual({ refused: got.refused, gzipped: true });
    });
  }
});

describe('recognize: formats this folder reads', () => {
  it('real files and their gzipped forms, from their first 4 KiB', () => {
    const cases: [Uint8Array, string][] = [
      [outside('node-cpu-prof.heavy.cpuprofile'), 'cpuprofile'],
      [outside('speedscope_0.6.0_two-sampled.speedscope.json'), 'speedscope'],
      [fixture('cpython-3.15-two-threads.collapsed'), 'collapsed'],
      [fixture('austin-full.austin'), 'collapsed'],
      [fixture('py-spy-threads.collapsed'), 'collapsed'],
      [
        Buffer.from(
          '{"head":{"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":1,"children":[]},"samples":[]}',
        ),
        'heapprofile',
      ],
    ];
    for (const [bytes, format] of cases) {
      expect(recognize(head(bytes))).toEqual({ format });
      // A gzip head cut at 4 KiB (the file is bigger) still inflates enough to tell.
      const gz = gzipSync(Buffer.concat([bytes, Buffer.alloc(200_000, 0x20)]));
      expect(recognize(head(gz))).toEqual({ format, gzipped: true });
    }
  });

  it('binary formats too (pprof gzipped or not, Tachyon never gzipped), and nothing for no bytes', () => {
    expect(recognize(head(outside('go-runtime-pprof.cpu.pb.gz')))).toEqual({ format: 'pprof', gzipped: true });
    expect(recognize(head(gunzipSync(outside('go-runtime-pprof.heap.pb.gz'))))).toEqual({ format: 'pprof' });
    expect(recognize(Buffer.from('HCAT\u0001\u0000\u0000\u0000'))).toEqual({ format: 'tachyon' });
    expect(recognize(gzipSync(Buffer.from('HCAT\u0001\u0000\u0000\u0000')))).toEqual({ gzipped: true });
    expect(recognize(new Uint8Array(0))).toEqual({});
  });
});
