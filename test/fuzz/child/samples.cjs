// Deterministic busy samples for the write-fault tests (shared by the child
// writer and the parent's reference file): one thread, 30 frames whose
// innermost one changes each sample (no REPEAT records), about 50 bytes each.
'use strict';

function frame(i) {
  return {
    filename: `mod${i % 7}.py`,
    funcname: `fn${i}`,
    location: { lineno: i + 1, endLineno: i + 2, colOffset: 0, endColOffset: 8 },
    opcode: i % 200,
  };
}

function busySample(i) {
  const frames = [];
  for (let d = 0; d < 30; d++) frames.push(frame(d === 0 ? 100 + ((i * 7919) % 61) : d));
  return [{ interpreterId: 0, threads: [{ threadId: 4242, status: 3, frameInfo: frames }] }];
}

module.exports = { busySample };
