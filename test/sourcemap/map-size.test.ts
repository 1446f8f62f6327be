/**
 * Source maps past MAX_MAP_BYTES (issue 38: a 40 MB inline map took record's own process to 2.37 GB) are refused
 * before they are decoded or read, with one warning naming the script; the frames stay as they ran.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_MAP_BYTES, SourceMapper } from '../../lib/sourcemap/mapper';
import { scratchDir } from '../support/scratch-dir';

const dir = scratchDir('profpack-map-size-');

const frame = (filename: string) => ({
  filename,
  funcname: 'hot',
  lineno: 1,
  endLineno: null,
  column: 1,
  endColumn: null,
  opcode: null,
});

/** A valid map of `bytes` bytes: one mapping (line 1 → src/app.ts:1) and padding in its `mappings`. */
function mapJson(bytes: number): string {
  const head = '{"version":3,"sources":["src/app.ts"],"names":[],"mappings":"AAAA';
  return head + ';'.repeat(Math.max(0, bytes - head.length - 2)) + '"}';
}

describe('source map size cap', () => {
  it('an inline map over the cap: one warning naming the script, the frame unmapped; under it: mapped', () => {
    const big = path.join(dir, 'big.js');
    const json = mapJson(MAX_MAP_BYTES + 1024);
    fs.writeFileSync(
      big,
      `function hot() {}\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(json).toString('base64')}\n`,
    );
    const mapper = new SourceMapper();
    const said: string[] = [];
    mapper.onWarning = (w) => said.push(w);
    expect(mapper.mapFrame(frame(big))).toEqual(frame(big));
    expect(mapper.mapFrame(frame(big))).toEqual(frame(big));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(new RegExp(`^source map of ${big} \\(inline\\) not used: \\d+ bytes, over the 16 MiB`));
    expect(mapper.warnings).toEqual(said);

    const small = path.join(dir, 'small.js');
    fs.writeFileSync(
      small,
      `function hot() {}\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(mapJson(4096)).toString('base64')}\n`,
    );
    expect(mapper.mapFrame(frame(small))).toMatchObject({ filename: path.join(dir, 'src', 'app.ts'), lineno: 1 });
  });

  it('a map file over the cap is not read (a sparse file: its size alone refuses it)', () => {
    const script = path.join(dir, 'sparse.js');
    fs.writeFileSync(script, 'function hot() {}\n');
    const fd = fs.openSync(`${script}.map`, 'w');
    fs.ftruncateSync(fd, 4 * MAX_MAP_BYTES);
    fs.closeSync(fd);
    const mapper = new SourceMapper();
    expect(mapper.mapFrame(frame(script))).toEqual(frame(script));
    expect(mapper.warnings).toEqual([
      `source map of ${script} (${script}.map) not used: ${4 * MAX_MAP_BYTES} bytes, over the 16 MiB a source map may take`,
    ]);
  });
});
