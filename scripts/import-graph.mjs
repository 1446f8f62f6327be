// The import graph of lib/ (relative imports of .ts files, type-only ones
// included: a type circle still ties two files together), and the layout
// rules docs/layout.md states: no circle anywhere; every folder of lib/, at any
// depth, is entered through its index.ts (code outside the folder imports that
// file only); inside lib/tachyon each level imports only the levels below it
// (index → v2-api → downgrade | recover → read | write → codec → file → format); and the folders kept APART
// never import each other that way.
//   node scripts/import-graph.mjs      prints every violation, exits 1 if any
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Tachyon's levels, lowest first; a file may import its own level or a lower one (read and write share one, but never import each other). */
const LEVELS = [['format'], ['file'], ['codec'], ['read', 'write'], ['downgrade', 'recover'], ['v2-api'], ['index']];

/** [from, to, why]: no file under lib/FROM imports a file under lib/TO. */
const APART = [
  [
    'tachyon',
    'v8',
    "the file format knows no V8 frame: the recording's writer maps them, lib/index.ts hands heapSink() its default",
  ],
  ['record/program', 'record/writer', 'the recorded program loads no writer code'],
  ['record/writer', 'record/program', "the writer runs none of the recorded program's code"],
];

export function importGraph(dir = path.join(root, 'lib')) {
  const graph = new Map();
  (function walk(d) {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) graph.set(full, importsOf(full));
    }
  })(dir);
  return graph;
}

function importsOf(file) {
  const src = readFileSync(file, 'utf8');
  const out = new Set();
  for (const m of src.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
  )) {
    const spec = m[1] ?? m[2];
    out.add(path.resolve(path.dirname(file), spec.replace(/\.js$/, '')) + '.ts');
  }
  return [...out];
}

/** Every cycle, as a list of files (Tarjan's strongly connected components of more than one file, or a self-import). */
export function cycles(graph) {
  let index = 0;
  const idx = new Map(),
    low = new Map(),
    stack = [],
    on = new Set(),
    found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(comp);
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** The level name of a file under lib/tachyon: its first folder, or its base name. */
function part(file, tachyon) {
  const rel = path.relative(tachyon, file).split(path.sep);
  return rel.length > 1 ? rel[0] : rel[0].replace(/\.ts$/, '');
}

/** The outermost folder of lib/ that holds `to` but not `from`, or undefined when `from` is inside all of them. */
function enteredFolder(from, to, lib) {
  const parts = path.relative(lib, to).split(path.sep);
  for (let i = 1; i < parts.length; i++) {
    const folder = path.join(lib, ...parts.slice(0, i));
    if (!from.startsWith(folder + path.sep)) return folder;
  }
  return undefined;
}

export function layoutViolations(graph, lib = path.join(root, 'lib')) {
  const tachyon = path.join(lib, 'tachyon');
  const levelOf = (p) => LEVELS.findIndex((names) => names.includes(p));
  const rel = (f) => path.relative(root, f);
  const bad = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if (!to.startsWith(lib + path.sep)) continue;
      const folder = enteredFolder(from, to, lib);
      if (folder !== undefined && to !== path.join(folder, 'index.ts')) {
        bad.push(`${rel(from)} imports ${rel(to)}: outside ${rel(folder)}, import ${rel(folder)}/index.ts`);
      }
      for (const [a, b, why] of APART) {
        const inside = (file, dir) => file.startsWith(path.join(lib, ...dir.split('/')) + path.sep);
        if (inside(from, a) && inside(to, b))
          bad.push(`${rel(from)} imports ${rel(to)}: lib/${a} keeps apart from lib/${b} (${why})`);
      }
      if (!from.startsWith(tachyon + path.sep) || !to.startsWith(tachyon + path.sep)) continue;
      const a = part(from, tachyon),
        b = part(to, tachyon);
      if (a === b) continue;
      const la = levelOf(a),
        lb = levelOf(b);
      if (la < 0 || lb < 0)
        bad.push(`${rel(from)} imports ${rel(to)}: ${la < 0 ? a : b} is not one of tachyon's levels`);
      else if (lb >= la)
        bad.push(
          `${rel(from)} imports ${rel(to)}: ${a} may import only levels below it (${LEVELS.map((l) => l.join(' | '))
            .reverse()
            .join(' → ')})`,
        );
    }
  }
  return bad;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = importGraph();
  const problems = [
    ...cycles(graph).map((c) => `import circle: ${c.map((f) => path.relative(root, f)).join(' ↔ ')}`),
    ...layoutViolations(graph),
  ];
  for (const p of problems) console.log(p);
  console.log(
    problems.length === 0
      ? `lib/: ${graph.size} files, no import circle, every folder entered through its index.ts, tachyon's levels hold, the folders kept apart are`
      : `${problems.length} problem(s)`,
  );
  process.exit(problems.length === 0 ? 0 : 1);
}
