import { describe, expect, it } from 'vitest';
import * as profpack from '../../lib/index';

describe('pctable public exports', () => {
  it('exports the PcTable API and its error codes from lib/index.ts', () => {
    expect(typeof profpack.PcTable.fromVarint).toBe('function');
    expect(typeof profpack.PcTable.fromLinear).toBe('function');
    expect(typeof profpack.PcTableSet).toBe('function');
    expect(typeof profpack.decodeVarintTable).toBe('function');
    expect(typeof profpack.lookupVarint).toBe('function');
    const codes = Object.values(profpack.ErrorCode).filter((c) => c.startsWith('ERR_PCTABLE_'));
    expect(codes.sort()).toEqual(
      [
        'ERR_PCTABLE_BAD_LENGTH_CODE',
        'ERR_PCTABLE_BAD_OFFSET',
        'ERR_PCTABLE_BAD_PCS',
        'ERR_PCTABLE_EMPTY_RUN',
        'ERR_PCTABLE_PC_OUT_OF_RANGE',
        'ERR_PCTABLE_PC_OVERFLOW',
        'ERR_PCTABLE_SIZE_MISMATCH',
        'ERR_PCTABLE_TRUNCATED',
        'ERR_PCTABLE_VARINT_OVERFLOW',
      ].sort(),
    );
    const table = profpack.PcTable.fromVarint(Uint8Array.from([0x02, 0x05, 0x00]));
    expect([table.lookup(4), table.lookup(5)]).toEqual([0, null]);
  });

  it('null options are no options, as JS APIs take them (issue 38: fromVarint(bytes, null) was a TypeError)', () => {
    const bytes = Uint8Array.from([0x02, 0x05, 0x00]);
    const plain = profpack.PcTable.fromVarint(bytes);
    const table = profpack.PcTable.fromVarint(bytes, null);
    const pcs = Uint32Array.from([0, 4]);
    expect([...table.lookupMany(pcs, null)]).toEqual([...plain.lookupMany(pcs)]);
    expect(table.size).toBe(plain.size);
    // fromLinear needs a size: null is a coded refusal, not a TypeError.
    let err: unknown;
    try {
      profpack.PcTable.fromLinear(Uint8Array.from([0, 0, 0, 0]), null);
    } catch (e) {
      err = e;
    }
    expect(profpack.isProfpackError(err)).toBe(true);
  });
});
