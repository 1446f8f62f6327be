/**
 * One self-contained HTML page: the template (lib/view/template), the
 * libraries' own dist files read from node_modules at run time (d3 and
 * d3-flame-graph: nothing is fetched when the page opens, and no copy of
 * library code lives in our sources), and the page's data as JSON.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, ProfpackError } from '../errors';
import { formatValue, nanosPerUnit } from '../profile/index';

/** lib/view/template from lib/view (sources, tests) or dist/view (compiled; the package ships lib/). */
function templateDir(): string {
  for (const dir of [path.join(__dirname, 'template'), path.join(__dirname, '..', '..', 'lib', 'view', 'template')]) {
    if (existsSync(path.join(dir, 'page.html'))) return dir;
  }
  throw new ProfpackError('the page template (lib/view/template/page.html) is missing from this installation', {
    code: ErrorCode.VIEW_ASSET_MISSING,
    expected: 'lib/view/template beside dist/',
  });
}

function readAsset(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ProfpackError(`cannot read ${what} (${file})`, {
      code: ErrorCode.VIEW_ASSET_MISSING,
      cause: err,
      expected: 'an installed copy of the package',
    });
  }
}

function libraryFile(pkg: string, fromEntry: (entry: string) => string): string {
  let entry: string;
  try {
    entry = require.resolve(pkg);
  } catch (err) {
    throw new ProfpackError(`the npm package ${pkg} is not installed; the page inlines it`, {
      code: ErrorCode.VIEW_ASSET_MISSING,
      cause: err,
      expected: `${pkg} in node_modules (a dependency of profpack)`,
    });
  }
  return fromEntry(entry);
}

let cached: Record<string, string> | undefined;

function assets(): Record<string, string> {
  if (cached !== undefined) return cached;
  const dir = templateDir();
  // d3's entry is dist/d3.mjs; its UMD bundle (the "umd" export) sits beside it.
  const d3 = libraryFile('d3', (entry) => path.join(path.dirname(entry), 'd3.min.js'));
  // d3-flame-graph's require entry is its UMD build; the minified one sits beside it and injects its own CSS.
  const flame = libraryFile('d3-flame-graph', (entry) => path.join(path.dirname(entry), 'd3-flamegraph.umd.min.js'));
  cached = {
    page: readAsset(path.join(dir, 'page.html'), 'the page template'),
    css: readAsset(path.join(dir, 'page.css'), 'the page style'),
    viewModel: readAsset(path.join(dir, 'view-model.js'), 'the view model'),
    pageJs: readAsset(path.join(dir, 'page.js'), 'the page script'),
    library: `${readAsset(d3, 'd3')}\n;\n${readAsset(flame, 'd3-flame-graph')}`,
  };
  return cached;
}

/**
 * Script source safe inside a <script> element: no "</script" or "<!--" can close or confuse it (both only occur in
 * strings).
 */
function scriptText(text: string): string {
  return text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** JSON safe inside a <script> element: every "<" as the JSON escape \u003c. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The CLI's value formatter as page script (window.profpackFormat): the very
 * functions, as source, so the page and the CLI print a value alike.
 */
export function formatScript(): string {
  const body = `${String(nanosPerUnit)}\n${String(formatValue)}\nreturn formatValue;`;
  return `window.profpackFormat = (function () {\n${body}\n})();`;
}

export interface PageParts {
  kind: 'flame' | 'diff';
  title: string;
  summary: string;
  /** The table's header cells, in order. */
  columns: string[];
  /** Trusted HTML for the diff legend. */
  legend?: string;
  data: unknown;
}

export function renderPage(parts: PageParts): string {
  const a = assets();
  const fill: Record<string, string> = {
    TITLE: escapeHtml(parts.title),
    SUMMARY: escapeHtml(parts.summary),
    KIND: parts.kind,
    LEGEND: parts.legend ?? '',
    TABLE_HEAD: `<tr>${parts.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr>`,
    PAGE_CSS: a.css!,
    DATA: scriptJson(parts.data),
    LIBRARY_JS: scriptText(a.library!),
    FORMAT_JS: scriptText(formatScript()),
    VIEW_MODEL_JS: scriptText(a.viewModel!),
    PAGE_JS: scriptText(a.pageJs!),
  };
  // One pass, so text inserted for one placeholder is never searched for another.
  return a.page!.replace(/\{\{([A-Z_]+)\}\}/g, (whole, name: string) => fill[name] ?? whole);
}
