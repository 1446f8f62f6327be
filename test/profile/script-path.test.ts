/**
 * One script, one name: a `file:` URL (V8's CPU profiler) and the path (V8's heap profiler, Datadog, CPython)
 * are the same frame file after reading, so diff, merge and SQL match functions across tools. Oracle: Node's own
 * pathToFileURL / fileURLToPath.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { Function as PFunction, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import { describe, expect, it } from 'vitest';
import { cpuprofileAdapter } from '../../lib/formats/devtools/cpuprofile';
import { readPprof } from '../../lib/formats/pprof/index';
import { FrameTable, makeFrame, scriptPath } from '../../lib/profile/index';
import { diffSources } from '../../lib/view/index';
import { frameFromV8 } from '../../lib/v8/index';
import { read } from '../formats/helpers';

const segment = fc.stringMatching(/^[^/\0]{1,12}$/).filter((s) => s !== '.' && s !== '..');

describe('scriptPath: a file: URL is its path', () => {
  it("any absolute path's file: URL reads back as the path (Node's fileURLToPath)", () => {
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (parts) => {
        const p = '/' + parts.join('/');
        const url = pathToFileURL(p).href;
        expect(scriptPath(url)).toBe(fileURLToPath(url));
        expect(scriptPath(url)).toBe(p);
        // A path stays a path.
        expect(scriptPath(p)).toBe(p);
      }),
    );
  });

  it('other URLs and what is no file URL stay as written', () => {
    for (const s of ['node:internal/process/task_queues', 'https://x.test/a.js', 'file://host/a.js', '', 'app.js'])
      expect(scriptPath(s)).toBe(s);
    expect(scriptPath('file:///a%ZZ.js')).toBe('file:///a%ZZ.js');
    expect(scriptPath('file://localhost/srv/a%20b.js')).toBe('/srv/a b.js');
  });

  it('every reader interns the path: FrameTable and V8 call frames', () => {
    const t = new FrameTable();
    const a = t.intern(makeFrame('work', 'file:///srv/my%20app/x.js', 3));
    const b = t.intern(makeFrame('work', '/srv/my app/x.js', 3));
    expect(a).toBe(b);
    expect(t.list[a]!.filename).toBe('/srv/my app/x.js');
    const cf = { functionName: 'f', scriptId: '1', url: 'file:///srv/x.js', lineNumber: 0, columnNumber: 0 };
    expect(frameFromV8(cf).filename).toBe('/srv/x.js');
  });
});

/** A pprof of one function `work` in `file`, of `count` samples. */
function pprofOf(file: string, count: number): Uint8Array {
  const strings = new StringTable();
  const fn = new PFunction({ id: 1, name: strings.dedup('work'), filename: strings.dedup(file) });
  const loc = new Location({ id: 1, line: [new Line({ functionId: 1, line: 5 })] });
  return new Profile({
    sampleType: [new ValueType({ type: strings.dedup('samples'), unit: strings.dedup('count') })],
    sample: [new Sample({ locationId: [1], value: [count] })],
    location: [loc],
    function: [fn],
    stringTable: strings,
  }).encode();
}

describe('one function across tools', () => {
  it('diff of a .cpuprofile (file: URL) against a pprof (path) lists the function once', () => {
    const root = { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 };
    const work = {
      functionName: 'work',
      scriptId: '1',
      url: 'file:///srv/my%20app/x.js',
      lineNumber: 4,
      columnNumber: 0,
    };
    const cpu = {
      nodes: [
        { id: 1, callFrame: root, children: [2] },
        { id: 2, callFrame: work, children: [] },
      ],
      startTime: 0,
      endTime: 3000,
      samples: [2, 2, 2],
      timeDeltas: [0, 1000, 1000],
    };
    const base = read(cpuprofileAdapter, JSON.stringify(cpu));
    const next = readPprof(pprofOf('/srv/my app/x.js', 5));
    const rows = diffSources(base, next, { sampleType: 'samples', limit: 0 }).rows.filter((r) => r.funcname === 'work');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ filename: '/srv/my app/x.js', baseSelf: 3, newSelf: 5, selfDelta: 2 });
  });
});
