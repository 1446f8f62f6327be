// The record check of recovery (lib/tachyon/recover/index.ts; twin: salvageRecords
// there): the longest prefix of a sample region that the record decoder
// (reader_records.h) replays whole. A profile whose writer died ends in a
// record cut by the kill, or in bytes that never were records; recovery keeps
// what is before the first record that does not decode. Plain C++, no N-API.
#pragma once
#include <cstddef>
#include <cstdint>

namespace profpack {
namespace tachyon {

struct Salvage {
  // records[0, end) decode whole (0 when nothing does).
  uint64_t end = 0;
  uint64_t samples = 0;
  // Distinct (thread id, interpreter id) pairs in records[0, end).
  uint32_t threads = 0;
  // Highest frame index the kept records use; -1 for none.
  int64_t maxFrame = -1;
};

// Decodes records[0, length) (final), cuts at the start of the first record
// that fails, and decodes the prefix again, until a prefix decodes whole.
Salvage SalvageRecords(const uint8_t* records, size_t length, bool littleEndian, uint64_t startTimeUs);

}  // namespace tachyon
}  // namespace profpack
