/**
 * The differential mutation loop the codec fuzz tests share (svb, varint, pctable): the JS twin against the
 * native module on mutated inputs, for a share of the fuzz time and at least 2,000 inputs, each input's context
 * kept for a hang report. Both verdicts must occur, or the mutations are not reaching the decoders' edges.
 */
import { expect } from 'vitest';
import { fuzzSeconds, fuzzSeed, Rng, runFor, type Outcome } from './mutate';

export type Verdict = 'accepted' | 'rejected';

const MIN_INPUTS = 2000;

/** The vitest timeout for a loop given `share` of the fuzz time. */
export function differentialTimeout(share: number): number {
  return fuzzSeconds() * share * 1000 + 60_000;
}

/**
 * Runs `step` on inputs drawn from one seeded RNG and logs what it did under `label`; `step` says whether its
 * input was decoded or refused alike, and hands its context (`describe`) for a hang report.
 */
export function runDifferential(
  label: string,
  share: number,
  step: (rng: Rng, i: number, seed: number, describe: (context: () => string) => void) => Verdict,
): void {
  const seed = fuzzSeed();
  const rng = new Rng(seed);
  const tally = { accepted: 0, rejected: 0 };
  let current = (): string => '';
  const iterations = runFor(
    fuzzSeconds() * share * 1000,
    MIN_INPUTS,
    (i) => {
      tally[step(rng, i, seed, (context) => (current = context))]++;
    },
    2000,
    () => current(),
  );
  console.info(
    `${label} fuzz (${process.env.PROFPACK_BACKEND ?? 'auto'} run, seed ${seed}): ${iterations} inputs, ` +
      `${tally.accepted} accepted, ${tally.rejected} rejected`,
  );
  expect(tally.accepted).toBeGreaterThan(0);
  expect(tally.rejected).toBeGreaterThan(0);
  expect(iterations).toBeGreaterThanOrEqual(MIN_INPUTS);
}

/** Fails unless the two backends' outcomes agree: the same result, or the same error code at the same offset. */
export function expectSameOutcome<A, B>(what: string, a: Outcome<A>, b: Outcome<B>, context: () => string): void {
  if (
    a.ok !== b.ok ||
    (a.ok && b.ok && (a.value as unknown) !== (b.value as unknown)) ||
    (!a.ok && !b.ok && (a.code !== b.code || a.offset !== b.offset))
  )
    expect.fail(`${what}: js ${JSON.stringify(a)} native ${JSON.stringify(b)}; ${context()}`);
}
