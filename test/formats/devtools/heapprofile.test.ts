import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Ajv from 'ajv';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heapprofileAdapter } from '../../../lib/formats/devtools/heapprofile';
import type { HeapProfile, HeapProfileNode } from '../../../lib/v8/index';
import { ProfileBuilder, SampleTypes, makeFrame, sampleTypeName } from '../../../lib/profile/index';
import { launch } from '../../view/browser';
import { speedscopeTable } from '../speedscope-app';
import { expectCoded, fuzzJson, read, totals, write } from '../helpers';

const work = mkdtempSync(path.join(tmpdir(), 'profpack-heapprofile-'));

/** A real `node --heap-prof` file: a script that keeps ~4 MB of strings and objects alive. */
function nodeHeapProfile(): Buffer {
  const script =
    "const keep = []; function strings(n) { for (let i = 0; i < n; i++) keep.push('y'.repeat(200 + (i % 50))); } function objects(n) { for (let i = 0; i < n; i++) keep.push({ i, a: [i, i + 1, i + 2] }); } strings(15000); objects(20000); globalThis.keep = keep;";
  const run = spawnSync(
    process.execPath,
    ['--heap-prof', '--heap-prof-dir', work, '--heap-prof-interval', '4096', '-e', script],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  const file = readdirSync(work).find((f) => f.endsWith('.heapprofile'));
  expect(file).toBeDefined();
  return readFileSync(path.join(work, file!));
}

function walk(head: HeapProfileNode, visit: (n: HeapProfileNode) => void): void {
  const pending = [head];
  while (pending.length > 0) {
    const n = pending.pop()!;
    visit(n);
    pending.push(...n.children);
  }
}

function selfSum(p: HeapProfile): number {
  let s = 0;
  walk(p.head, (n) => (s += n.selfSize));
  return s;
}

/** HeapProfiler.SamplingHeapProfile as the DevTools protocol defines it (Runtime.CallFrame, SamplingHeapProfileNode/Sample). */
const protocolSchema = {
  definitions: {
    callFrame: {
      type: 'object',
      required: ['functionName', 'scriptId', 'url', 'lineNumber', 'columnNumber'],
      properties: {
        functionName: { type: 'string' },
        scriptId: { type: 'string' },
        url: { type: 'string' },
        lineNumber: { type: 'integer' },
        columnNumber: { type: 'integer' },
      },
    },
    node: {
      type: 'object',
      required: ['callFrame', 'selfSize', 'id', 'children'],
      properties: {
        callFrame: { $ref: '#/definitions/callFrame' },
        selfSize: { type: 'number', minimum: 0 },
        id: { type: 'integer' },
        children: { type: 'array', items: { $ref: '#/definitions/node' } },
      },
    },
  },
  type: 'object',
  required: ['head', 'samples'],
  properties: {
    head: { $ref: '#/definitions/node' },
    samples: {
      type: 'array',
      items: {
        type: 'object',
        required: ['size', 'nodeId', 'ordinal'],
        properties: { size: { type: 'number' }, nodeId: { type: 'integer' }, ordinal: { type: 'number' } },
      },
    },
  },
};
const validate = new Ajv({ allErrors: true, strict: false }).compile(protocolSchema);

let real: Buffer;
let browser: Browser;
beforeAll(async () => {
  real = nodeHeapProfile();
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('.heapprofile read', () => {
  it('a node --heap-prof file: inuse_space totals the sum of selfSize, samples/count the samples', () => {
    const json = JSON.parse(real.toString('utf8')) as HeapProfile;
    const src = read(heapprofileAdapter, real);
    expect(src.meta.sampleTypes.map(sampleTypeName)).toEqual(['inuse_space/bytes', 'samples/count']);
    expect(src.meta.defaultSampleType).toBe(0);
    const bytes = totals(src, 0);
    expect(bytes.total).toBe(selfSum(json));
    expect(bytes.total).toBeGreaterThan(1_000_000);
    const ids = new Set<number>();
    walk(json.head, (n) => ids.add(n.id));
    // Node 20 lists a few samples of nodes its tree leaves out (their bytes are in no selfSize): not counted.
    expect(totals(src, 1).total).toBe(json.samples!.filter((s) => ids.has(s.nodeId)).length);
    // The functions that allocated hold the bytes.
    expect(
      (bytes.self.get('repeat') ?? 0) + (bytes.self.get('strings') ?? 0) + (bytes.self.get('objects') ?? 0),
    ).toBeGreaterThan(bytes.total / 2);
  });

  it('refuses damage with coded errors (any value of the wrong type, and by hand)', () => {
    fuzzJson(heapprofileAdapter, JSON.parse(real.toString('utf8')));
    expectCoded(() => read(heapprofileAdapter, '{"head":'), 'ERR_CONVERT_BAD_INPUT', /not valid JSON/);
    expectCoded(
      () => read(heapprofileAdapter, '{"head":{"callFrame":{},"selfSize":-5,"id":1,"children":[]}}'),
      'ERR_CONVERT_BAD_INPUT',
      /selfSize -5/,
    );
    const warnings: string[] = [];
    const orphan = read(
      heapprofileAdapter,
      '{"head":{"callFrame":{},"selfSize":0,"id":1,"children":[]},"samples":[{"size":1,"nodeId":9,"ordinal":1}]}',
      { onWarning: (m: string) => warnings.push(m) },
    );
    expect(totals(orphan, 1).total).toBe(0);
    expect(warnings).toEqual([
      expect.stringMatching(/1 of the .heapprofile's samples name nodes its tree does not have/),
    ]);
    expectCoded(
      () =>
        read(heapprofileAdapter, '{"head":{"callFrame":{},"selfSize":0,"id":1,"children":[]},"samples":[{"size":1}]}'),
      'ERR_CONVERT_BAD_INPUT',
      /a sample without a nodeId/,
    );
    expectCoded(
      () => read(heapprofileAdapter, '{"head":{"callFrame":{},"selfSize":0,"id":1,"children":{}}}'),
      'ERR_CONVERT_BAD_INPUT',
      /children is not an array/,
    );
  });
});

describe('.heapprofile write', () => {
  it('written back: the DevTools protocol shape, unique ids, the same bytes per function', () => {
    const src = read(heapprofileAdapter, real);
    const text = write(heapprofileAdapter, src).text;
    const out = JSON.parse(text) as HeapProfile;
    expect(validate(out), JSON.stringify(validate.errors)).toBe(true);
    const ids = new Set<number>();
    walk(out.head, (n) => {
      expect(ids.has(n.id)).toBe(false);
      ids.add(n.id);
    });
    for (const s of out.samples!) expect(ids.has(s.nodeId)).toBe(true);
    expect(out.head.callFrame.functionName).toBe('(root)');
    expect(selfSum(out)).toBe(selfSum(JSON.parse(real.toString('utf8')) as HeapProfile));
    expect(totals(read(heapprofileAdapter, text), 0).self).toEqual(totals(read(heapprofileAdapter, real), 0).self);
  });

  it('takes the bytes column of a pprof-like profile, and refuses a profile without bytes', () => {
    const b = new ProfileBuilder({
      sampleTypes: [
        { type: 'alloc_objects', unit: 'count' },
        { type: 'alloc_space', unit: 'bytes' },
        { type: 'inuse_space', unit: 'bytes' },
      ],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 0n,
    });
    const f = b.internFrame(makeFrame('alloc', 'a.go', 10));
    b.add(b.stacks.push(0, f), b.internThread(0n), NaN, 0, [3, 3 * 2 ** 30, 1024]);
    expect(selfSum(JSON.parse(write(heapprofileAdapter, b).text) as HeapProfile)).toBe(3 * 2 ** 30);
    expect(selfSum(JSON.parse(write(heapprofileAdapter, b, { sampleType: 'inuse_space' }).text) as HeapProfile)).toBe(
      1024,
    );
    expectCoded(
      () => write(heapprofileAdapter, b, { sampleType: 'alloc_objects' }),
      'ERR_CONVERT_SAMPLE_TYPE',
      /holds bytes/,
    );
    const cpu = new ProfileBuilder({
      sampleTypes: [SampleTypes.cpu],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 0n,
    });
    expectCoded(() => write(heapprofileAdapter, cpu), 'ERR_CONVERT_SAMPLE_TYPE', /no sample type in bytes/);
  });

  it('a deep stack (5000 frames) writes and reads without recursion', () => {
    const b = new ProfileBuilder({
      sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }],
      defaultSampleType: 0,
      startTimeUs: 0n,
      sampleIntervalUs: 0n,
    });
    let s = 0;
    for (let i = 0; i < 5000; i++) s = b.stacks.push(s, b.internFrame(makeFrame(`f${i}`, 'deep.js', i + 1)));
    b.add(s, b.internThread(0n), NaN, 0, [4096]);
    expect(totals(read(heapprofileAdapter, write(heapprofileAdapter, b).text)).total).toBe(4096);
  });
});

describe(".heapprofile in speedscope's importer (Chromium)", () => {
  it('our .heapprofile imports as a Chrome heap profile with the same per-function bytes as node --heap-prof', async () => {
    const original = path.join(work, 'original.heapprofile');
    const ours = path.join(work, 'ours.heapprofile');
    writeFileSync(original, real);
    writeFileSync(ours, write(heapprofileAdapter, read(heapprofileAdapter, real)).text);
    const theirs = await speedscopeTable(browser, work, original);
    const mine = await speedscopeTable(browser, work, ours);
    expect(mine.log).toContain('log: Importing as Chrome Heap Profile');
    expect(mine.log.filter((l) => /^(error|pageerror|dialog)/.test(l))).toEqual([]);
    expect(mine.table).toMatch(/MB/);
    expect(mine.table).toBe(theirs.table);
  });
});
