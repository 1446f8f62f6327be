// libFuzzer target: PcTable's C++ core (native/pctable): Go varint-delta
// decode, its streaming lookup, the linear-index encoder, and LinearTable
// Open + Lookup on arbitrary bytes.
//   op 0: decode a varint table; runs must tile [0, end) in quantum steps;
//         LookupVarint must agree with the decoded runs; the linear encoding
//         of the runs must open and look up the same values.
//   op 1: LinearTable::Open on arbitrary bytes and size; when it accepts, up
//         to 512 lookups spread over [0, size), each through Lookup on the
//         exact bytes and LookupLinearPadded on a copy with kLookupPadding
//         zero bytes after it (the addon's layout): the same value, and any
//         read past either buffer is a heap overflow ASan reports.
//   op 2: LookupVarint at one PC against a full decode.
// Input: byte 0 = op, byte 1 = quantum (0 = 1), bytes 2..5 = size (LE),
// bytes 6..9 = pc (LE), then the table bytes (the input's tail).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error_codes.h"
#include "fuzz/fuzz_common.h"
#include "pctable/format.h"
#include "pctable/linear_index.h"
#include "pctable/varint_table.h"

namespace {

using profpack::FormatError;
namespace codes = profpack::codes;
namespace pct = profpack::pctable;

const std::initializer_list<const char*> kCodes = {
    codes::kPctableTruncated,    codes::kPctableVarintOverflow, codes::kPctableEmptyRun,      codes::kPctablePcOverflow,
    codes::kPctableSizeMismatch, codes::kPctableBadOffset,      codes::kPctableBadLengthCode, codes::kPctableBadPcs};

void CheckRuns(const std::vector<pct::VarintRun>& runs, uint32_t quantum) {
  uint32_t at = 0;
  for (const auto& r : runs) {
    PROFPACK_FUZZ_CHECK(r.startPc == at, "runs do not tile the PC range");
    PROFPACK_FUZZ_CHECK(r.endPc > r.startPc, "empty run accepted");
    PROFPACK_FUZZ_CHECK((r.endPc - r.startPc) % quantum == 0, "run length not a multiple of the quantum");
    at = r.endPc;
  }
}

// Both lookups of one PC: the bounds-checked one on the exact bytes and the
// branch-light one on the padded copy.
int32_t LookupBoth(const pct::LinearTable& exact, const std::vector<uint8_t>& padded, uint32_t pc) {
  const int32_t v = exact.Lookup(pc);
  const int32_t w = pct::LookupLinearPadded(padded.data(), exact.indexBytes, exact.width, exact.quantum, pc);
  PROFPACK_FUZZ_CHECK(v == w, "padded lookup " + std::to_string(w) + " != lookup " + std::to_string(v) + " at pc " +
                                  std::to_string(pc));
  return v;
}

std::vector<uint8_t> Padded(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out(data, data + size);
  out.resize(size + pct::kLookupPadding, 0);
  return out;
}

void VarintRoundTrip(const uint8_t* data, size_t size, uint32_t quantum, uint32_t pcParam) {
  pct::DecodedVarintTable decoded;
  try {
    decoded = pct::DecodeVarintTable(data, size, quantum);
  } catch (const FormatError& e) {
    profpack::fuzz::CheckFormatError(e, size, kCodes);
    return;
  }
  PROFPACK_FUZZ_CHECK(decoded.end <= size, "decode ended past the input");
  const auto& runs = decoded.runs;
  CheckRuns(runs, quantum);
  if (runs.empty()) return;
  const uint32_t end = runs.back().endPc;
  std::vector<uint32_t> probes = {0, end - 1, pcParam % end};
  for (size_t i = 0; i < runs.size() && i < 64; ++i) probes.insert(probes.end(), {runs[i].startPc, runs[i].endPc - 1});
  for (uint32_t pc : probes) {
    pct::VarintRun hit{};
    const bool found = pct::LookupVarint(data, size, quantum, pc, &hit);
    PROFPACK_FUZZ_CHECK(found, "LookupVarint misses a PC the decoded runs cover");
    PROFPACK_FUZZ_CHECK(hit.startPc <= pc && pc < hit.endPc, "LookupVarint returned a run not containing the PC");
  }
  PROFPACK_FUZZ_CHECK(!pct::LookupVarint(data, size, quantum, end, nullptr), "LookupVarint finds a PC past the table");

  // The linear index of the same runs must answer the same values. A few
  // bytes can declare ~2^32 PCs (2^24 chunks, ~60 MB, seconds under ASan): a known cost
  // (test/fuzz/RESULTS.md), kept out of the loop so the fuzzer stays fast.
  if (end > (1u << 24)) return;
  const std::vector<uint8_t> linear = pct::EncodeLinear(runs, end, quantum);
  pct::LinearTable table;
  try {
    table = pct::LinearTable::Open(linear.data(), linear.size(), end, quantum);
  } catch (const FormatError& e) {
    profpack::fuzz::Fail("the linear encoding of a decoded table does not open", e.what());
  }
  const std::vector<uint8_t> padded = Padded(linear.data(), linear.size());
  for (uint32_t pc : probes) {
    pct::VarintRun hit{};
    pct::LookupVarint(data, size, quantum, pc, &hit);
    const int32_t v = LookupBoth(table, padded, pc);
    PROFPACK_FUZZ_CHECK(v == hit.value, "linear lookup " + std::to_string(v) + " != varint " +
                                            std::to_string(hit.value) + " at pc " + std::to_string(pc));
  }
}

void LinearOpen(const uint8_t* data, size_t size, uint32_t tableSize, uint32_t quantum, uint32_t pcParam) {
  pct::LinearTable table;
  try {
    table = pct::LinearTable::Open(data, size, tableSize, quantum);
  } catch (const FormatError& e) {
    profpack::fuzz::CheckFormatError(e, size, kCodes);
    return;
  }
  if (tableSize == 0) return;
  const std::vector<uint8_t> padded = Padded(data, size);
  const uint64_t step = tableSize / 512 + 1;
  for (uint64_t pc = 0; pc < tableSize; pc += step) LookupBoth(table, padded, static_cast<uint32_t>(pc));
  LookupBoth(table, padded, tableSize - 1);
  LookupBoth(table, padded, pcParam % tableSize);
}

void VarintLookup(const uint8_t* data, size_t size, uint32_t quantum, uint32_t pc) {
  pct::VarintRun hit{};
  bool found = false;
  try {
    found = pct::LookupVarint(data, size, quantum, pc, &hit);
  } catch (const FormatError& e) {
    profpack::fuzz::CheckFormatError(e, size, kCodes);
    // The run-by-run lookup fails exactly where a full decode fails, if it gets there.
    try {
      pct::DecodeVarintTable(data, size, quantum);
      profpack::fuzz::Fail("LookupVarint fails on a table that decodes", e.what());
    } catch (const FormatError& d) {
      PROFPACK_FUZZ_CHECK(d.code == e.code && d.offset == e.offset, "lookup and decode fail differently");
    }
    return;
  }
  if (found)
    PROFPACK_FUZZ_CHECK(hit.startPc <= pc && pc < hit.endPc, "LookupVarint returned a run not containing the PC");
  try {
    const auto decoded = pct::DecodeVarintTable(data, size, quantum);
    if (found) {
      bool same = false;
      for (const auto& r : decoded.runs)
        same = same || (r.startPc == hit.startPc && r.endPc == hit.endPc && r.value == hit.value);
      PROFPACK_FUZZ_CHECK(same, "LookupVarint's run is not one of the decoded runs");
    } else {
      PROFPACK_FUZZ_CHECK(decoded.runs.empty() || pc >= decoded.runs.back().endPc, "LookupVarint misses a covered PC");
    }
  } catch (const FormatError&) {
    // Damage after the hit is not noticed by the lookup (as in runtime.pcvalue).
    PROFPACK_FUZZ_CHECK(found, "lookup reached the end of a table the decoder rejects");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  profpack::fuzz::Params params(input, input_size);
  const uint8_t op = params.Byte() % 3;
  const uint8_t q = params.Byte();
  const uint32_t quantum = q == 0 ? 1 : q;
  const uint32_t tableSize = params.U32();
  const uint32_t pc = params.U32();
  const uint8_t* data = params.rest();
  const size_t size = params.rest_size();
  switch (op) {
    case 0: VarintRoundTrip(data, size, quantum, pc); break;
    // The addon (SizeArg) and the JS API accept only sizes that are positive
    // multiples of the quantum; Open relies on that.
    case 1:
      LinearOpen(data, size, tableSize - tableSize % quantum == 0 ? quantum : tableSize - tableSize % quantum, quantum,
                 pc);
      break;
    default: VarintLookup(data, size, quantum, pc); break;
  }
  return 0;
}
