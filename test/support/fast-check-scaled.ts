/**
 * fast-check with every property's runs multiplied by PROFPACK_FC_RUNS_SCALE (vitest.config.mts puts this module in
 * place of 'fast-check' only when the variable is set and not 1): a property meets in one long run the rare cases
 * that CI's runs would meet one per many runs. Seeds stay fast-check's own, fresh each run and printed on failure.
 */
import * as fc from 'fast-check';

const scale = Number(process.env.PROFPACK_FC_RUNS_SCALE ?? '1');
if (!(scale > 0))
  throw new Error(`PROFPACK_FC_RUNS_SCALE must be a number above 0, got ${process.env.PROFPACK_FC_RUNS_SCALE}`);

function scaled<P extends { numRuns?: number }>(params: P | undefined): P {
  const numRuns = params?.numRuns ?? fc.readConfigureGlobal().numRuns ?? 100;
  return { ...params, numRuns: Math.max(1, Math.round(numRuns * scale)) } as P;
}

// Each test file imports fast-check's default export (`import fc from 'fast-check'`): only assert changes.
const scaledAssert = ((property: fc.IRawProperty<unknown[]>, params?: fc.Parameters<unknown[]>) =>
  fc.assert(property, scaled(params))) as typeof fc.assert;
export default { ...fc, assert: scaledAssert };
