/**
 * registry.ts's ADAPTERS is the one list of formats: a throwaway format added to a compiled build as one adapter
 * file plus one line in that list shows in content detection, `--to` choices, every command's help and `convert`
 * both ways, with nothing else edited.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildForTests } from '../support/build';

const { build, dir, cli } = buildForTests('profpack-one-list-', { writable: true });

// A format of its own: a magic line, then collapsed stacks (the adapter reads and writes through collapsed's).
const ADAPTER_FILE = `'use strict';
const { collapsedAdapter } = require('./collapsed');
const MAGIC = 'LINES 1\\n';
exports.linesAdapter = {
  name: 'lines',
  title: 'throwaway lines',
  label: 'lines',
  extensions: ['.lines'],
  detect: (head) => Buffer.from(head.buffer, head.byteOffset, head.length).toString('latin1').startsWith(MAGIC),
  read: (input, options) => collapsedAdapter.read({ bytes: input.bytes.subarray(MAGIC.length) }, options),
  write(source, target, options) {
    target.write(MAGIC);
    collapsedAdapter.write(source, target, options);
  },
};
`;

const STACKS = 'main;parse;token 30\nmain;eval 12\nmain;parse 5\n';

function sortedLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

describe('one list of formats', () => {
  beforeAll(() => {
    writeFileSync(path.join(build.dist, 'formats', 'lines.js'), ADAPTER_FILE);
    const registry = path.join(build.dist, 'formats', 'registry.js');
    const before = readFileSync(registry, 'utf8');
    // The one line: first in the list, so that detection tries it before collapsed (whose lines it also matches).
    const after = before.replace(/(ADAPTERS = \[\n)/, "$1    require('./lines').linesAdapter,\n");
    expect(after).not.toBe(before);
    writeFileSync(registry, after);
    writeFileSync(path.join(dir, 'in.collapsed'), STACKS);
  });

  it('is detected by content, whatever the file is called', () => {
    writeFileSync(path.join(dir, 'plain.txt'), `LINES 1\n${STACKS}`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the build is compiled at run time
    const formats = require(path.join(build.dist, 'formats', 'index.js')) as {
      detectFormat(bytes: Uint8Array): string;
      FORMAT_NAMES: readonly string[];
    };
    expect(formats.detectFormat(readFileSync(path.join(dir, 'plain.txt')))).toBe('lines');
    expect(formats.FORMAT_NAMES).toContain('lines');
    const info = cli(['info', 'plain.txt']);
    expect(info.stderr).toBe('');
    expect(info.stdout).toContain('throwaway lines');
  });

  it('is a --to and --from choice and in the help of every command that reads profiles', () => {
    // Commander wraps help text: compared with its white space collapsed.
    const help = (command: string): string => cli([command, '--help']).stdout.replace(/\s+/g, ' ');
    const convertHelp = help('convert');
    for (const flag of ['--to', '--from']) expect(convertHelp).toMatch(`${flag} <format> `);
    expect(convertHelp.match(/\(choices: "lines", "tachyon"/g)).toHaveLength(2);
    expect(convertHelp).toContain('convert a profile between lines, Tachyon,');
    for (const command of ['info', 'top', 'flame']) expect(help(command)).toContain('(lines, Tachyon, pprof,');
  });

  it('converts to it by its extension and back, keeping every stack and value', () => {
    const out = cli(['convert', 'in.collapsed', '-o', 'out.lines', '-q']);
    expect(out.status, out.stderr).toBe(0);
    const written = readFileSync(path.join(dir, 'out.lines'), 'utf8');
    expect(written.startsWith('LINES 1\n')).toBe(true);
    expect(sortedLines(written.slice('LINES 1\n'.length))).toEqual(sortedLines(STACKS));
    const back = cli(['convert', 'out.lines', '-o', 'back.collapsed', '-q']);
    expect(back.status, back.stderr).toBe(0);
    expect(sortedLines(readFileSync(path.join(dir, 'back.collapsed'), 'utf8'))).toEqual(sortedLines(STACKS));
  });
});
