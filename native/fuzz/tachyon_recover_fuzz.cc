// libFuzzer target: recovery's record check (native/tachyon/read/recover_scan.h),
// the native half of `profpack recover`: a sample region cut anywhere, or
// ending in bytes that never were records.
//
// Contract checked: the kept prefix is within the input; salvaging the kept
// prefix again keeps all of it with the same samples, threads and highest
// frame (it decodes whole); a prefix holds at most one sample per 2 bytes and
// one thread per 13. Cutting the input further never keeps more than before.
//
// Input: byte 0 = flags (bit 0: records are little-endian), bytes 1-2 = where
// to cut for the last check (u16, modulo the length), then the records.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_common.h"
#include "tachyon/read/recover_scan.h"

namespace tachyon = profpack::tachyon;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profpack::fuzz::Params params(data, size);
  const bool littleEndian = (params.Byte() & 1) != 0;
  const uint32_t cutSeed = params.Byte() | (static_cast<uint32_t>(params.Byte()) << 8);
  const uint8_t* records = data + (size < 3 ? size : 3);
  const size_t length = size < 3 ? 0 : size - 3;
  const uint64_t start = 1000000;

  const tachyon::Salvage s = tachyon::SalvageRecords(records, length, littleEndian, start);
  PROFPACK_FUZZ_CHECK(s.end <= length, std::to_string(s.end) + " > " + std::to_string(length));
  PROFPACK_FUZZ_CHECK(s.samples * 2 <= s.end, "more samples than the kept bytes can hold");
  PROFPACK_FUZZ_CHECK(uint64_t{s.threads} * 13 <= s.end, "more threads than the kept bytes can hold");
  PROFPACK_FUZZ_CHECK(s.end > 0 || (s.samples == 0 && s.threads == 0 && s.maxFrame == -1),
                      "an empty prefix holds something");

  const tachyon::Salvage again = tachyon::SalvageRecords(records, static_cast<size_t>(s.end), littleEndian, start);
  PROFPACK_FUZZ_CHECK(
      again.end == s.end && again.samples == s.samples && again.threads == s.threads && again.maxFrame == s.maxFrame,
      "the kept prefix does not decode whole: " + std::to_string(again.end) + " of " + std::to_string(s.end));

  if (length > 0) {
    const size_t cut = cutSeed % length;
    const tachyon::Salvage shorter = tachyon::SalvageRecords(records, cut, littleEndian, start);
    PROFPACK_FUZZ_CHECK(shorter.end <= s.end || shorter.end <= cut, "a shorter input kept more");
    PROFPACK_FUZZ_CHECK(shorter.end <= cut, "kept past the cut");
  }
  return 0;
}
