/**
 * The embedded workload `npm run demo` records: ordinary JS work with
 * recognisable call stacks — a recursive-descent expression parser and
 * evaluator, JSON round trips of generated records, a log scan with regular
 * expressions, and a sort with a custom comparator — in deterministic
 * rounds until the time budget is spent.
 */

function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

type Token = { kind: 'num'; value: number } | { kind: 'op'; value: string };

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === ' ') {
      i++;
    } else if (ch >= '0' && ch <= '9') {
      let j = i;
      while (j < text.length && ((text[j]! >= '0' && text[j]! <= '9') || text[j] === '.')) j++;
      tokens.push({ kind: 'num', value: Number(text.slice(i, j)) });
      i = j;
    } else {
      tokens.push({ kind: 'op', value: ch });
      i++;
    }
  }
  return tokens;
}

type Ast = number | { op: string; left: Ast; right: Ast };

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  parseExpression(): Ast {
    let left = this.parseTerm();
    for (
      let t = this.tokens[this.pos];
      t?.kind === 'op' && (t.value === '+' || t.value === '-');
      t = this.tokens[this.pos]
    ) {
      this.pos++;
      left = { op: t.value, left, right: this.parseTerm() };
    }
    return left;
  }

  parseTerm(): Ast {
    let left = this.parseFactor();
    for (
      let t = this.tokens[this.pos];
      t?.kind === 'op' && (t.value === '*' || t.value === '/');
      t = this.tokens[this.pos]
    ) {
      this.pos++;
      left = { op: t.value, left, right: this.parseFactor() };
    }
    return left;
  }

  parseFactor(): Ast {
    const t = this.tokens[this.pos++];
    if (t === undefined) return 0;
    if (t.kind === 'num') return t.value;
    if (t.value === '(') {
      const inner = this.parseExpression();
      this.pos++; // ')'
      return inner;
    }
    return this.parseFactor();
  }
}

export function evaluate(ast: Ast): number {
  if (typeof ast === 'number') return ast;
  const l = evaluate(ast.left);
  const r = evaluate(ast.right);
  switch (ast.op) {
    case '+':
      return l + r;
    case '-':
      return l - r;
    case '*':
      return l * r;
    default:
      return r === 0 ? 0 : l / r;
  }
}

function generateExpression(random: () => number, depth: number): string {
  if (depth === 0 || random() < 0.2) return String(Math.floor(random() * 1000));
  const op = '+-*/'[Math.floor(random() * 4)]!;
  const text = `${generateExpression(random, depth - 1)} ${op} ${generateExpression(random, depth - 1)}`;
  return random() < 0.3 ? `(${text})` : text;
}

export function calculatorRound(random: () => number): number {
  let sum = 0;
  for (let i = 0; i < 60; i++) {
    const ast = new Parser(tokenize(generateExpression(random, 7))).parseExpression();
    sum += evaluate(ast);
  }
  return sum;
}

interface Order {
  id: number;
  customer: string;
  items: { sku: string; qty: number; price: number }[];
  tags: string[];
}

function makeOrders(random: () => number, count: number): Order[] {
  const orders: Order[] = [];
  for (let i = 0; i < count; i++) {
    const items = Array.from({ length: 1 + Math.floor(random() * 6) }, (_, k) => ({
      sku: `SKU-${(i * 7 + k) % 997}`,
      qty: 1 + Math.floor(random() * 9),
      price: Math.round(random() * 10000) / 100,
    }));
    orders.push({
      id: i,
      customer: `customer-${Math.floor(random() * 500)}`,
      items,
      tags: random() < 0.5 ? ['priority'] : ['standard', 'bulk'],
    });
  }
  return orders;
}

export function jsonRound(random: () => number): number {
  const text = JSON.stringify(makeOrders(random, 300));
  const back = JSON.parse(text) as Order[];
  return back.reduce((total, o) => total + o.items.reduce((s, it) => s + it.qty * it.price, 0), 0);
}

const LOG_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)Z (INFO|WARN|ERROR) \[([a-z-]+)\] (.*?)(?: latency=(\d+)ms)?$/;

export function scanLogs(random: () => number): number {
  const levels = ['INFO', 'INFO', 'INFO', 'WARN', 'ERROR'];
  let slow = 0;
  for (let i = 0; i < 1500; i++) {
    const line =
      `2026-11-23T08:${String(i % 60).padStart(2, '0')}:${String((i * 7) % 60).padStart(2, '0')}Z ` +
      `${levels[Math.floor(random() * 5)]} ` +
      `[svc-${i % 9 === 0 ? 'auth' : 'api'}] request ${i} done latency=${Math.floor(random() * 900)}ms`;
    const m = LOG_LINE.exec(line);
    if (m !== null && Number(m[5] ?? 0) > 500 && m[2] !== 'INFO') slow++;
  }
  return slow;
}

export function sortRound(random: () => number): number {
  const rows = Array.from({ length: 4000 }, (_, i) => ({
    name: `row-${Math.floor(random() * 1e6)}`,
    score: random(),
    group: i % 17,
  }));
  rows.sort((a, b) => a.group - b.group || b.score - a.score || a.name.localeCompare(b.name));
  return rows[0]!.score;
}

/**
 * The parts by name; `runWorkload`'s `slower` part runs SLOWER_FACTOR times per round (a regression to find with
 * `profpack diff`).
 */
export const WORKLOAD_PARTS: Record<string, (random: () => number) => number> = {
  calculatorRound,
  jsonRound,
  scanLogs,
  sortRound,
};
export const SLOWER_FACTOR = 4;

/** How many times the budget the wall clock may run when the machine gives the workload little CPU. */
const WALL_CAP = 30;

/**
 * Runs rounds of every part until the process has used `budgetMs` of CPU (or WALL_CAP times that of wall time
 * passed): on a busy machine a wall-clock budget gave a few dozen samples, and a diff of two such runs was noise.
 * Returns a checksum so nothing is optimised away.
 */
export function runWorkload(budgetMs = 2000, seed = 42, slower?: string): { rounds: number; checksum: number } {
  if (slower !== undefined && WORKLOAD_PARTS[slower] === undefined)
    throw new Error(`no workload part "${slower}" (${Object.keys(WORKLOAD_PARTS).join(', ')})`);
  const random = xorshift(seed);
  const cpuMs = (): number => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const cpuEnd = cpuMs() + budgetMs;
  const wallEnd = Date.now() + budgetMs * WALL_CAP;
  let rounds = 0;
  let checksum = 0;
  while (cpuMs() < cpuEnd && Date.now() < wallEnd) {
    for (const [name, part] of Object.entries(WORKLOAD_PARTS)) {
      for (let k = name === slower ? SLOWER_FACTOR : 1; k > 0; k--) checksum += part(random);
    }
    rounds++;
  }
  return { rounds, checksum };
}

/** A fixed amount of work (for overhead measurements); returns its wall time in ms. */
export function runRounds(rounds: number, seed = 42): { ms: number; checksum: number } {
  const random = xorshift(seed);
  const t0 = process.hrtime.bigint();
  let checksum = 0;
  for (let i = 0; i < rounds; i++) {
    checksum += calculatorRound(random);
    checksum += jsonRound(random);
    checksum += scanLogs(random);
    checksum += sortRound(random);
  }
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, checksum };
}

// `node workload.js MS [PART]` runs for MS ms of CPU (PART slower);
// `node workload.js --rounds N` prints {"ms": …} for N rounds.
if (require.main === module) {
  if (process.argv[2] === '--rounds') {
    const result = runRounds(Number(process.argv[3] ?? 50));
    console.log(JSON.stringify({ ...result, maxRssKb: process.resourceUsage().maxRSS }));
  } else {
    const ms = Number(process.argv[2] ?? 2000);
    const { rounds } = runWorkload(ms, 42, process.argv[3]);
    console.log(`workload: ${rounds} rounds in ${ms} ms of CPU`);
  }
}
