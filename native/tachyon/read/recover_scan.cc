#include "tachyon/read/recover_scan.h"

#include <vector>

#include "tachyon/read/reader_records.h"

namespace profpack {
namespace tachyon {
namespace {

constexpr size_t kEvents = 4096;
constexpr size_t kTimestamps = 16384;
constexpr size_t kNodes = 4096 + kMaxStackDepth;

struct Pass {
  bool whole = false;
  Salvage salvage;
};

Pass DecodeOnce(const uint8_t* records, size_t length, bool littleEndian, uint64_t startTimeUs) {
  DecodeBuffers buffers(kEvents, kTimestamps, kNodes);
  DecodeOutput& out = buffers.out;
  const std::vector<uint32_t>& events = buffers.events;
  const std::vector<uint32_t>& nodes = buffers.nodes;
  // Any number of threads: the header that would declare them was never written.
  RecordDecoder decoder(littleEndian, startTimeUs, UINT32_MAX, length);
  Pass pass;
  size_t pos = 0;
  for (;;) {
    const DecodeStatus status = decoder.Decode(records + pos, pos, length - pos, true, out);
    for (size_t e = 0; e < out.eventCount; ++e) {
      if (events[e * kEventStride] == static_cast<uint32_t>(EventKind::kThread)) ++pass.salvage.threads;
    }
    for (size_t n = 0; n < out.nodeCount; ++n) {
      if (static_cast<int64_t>(nodes[2 * n + 1]) > pass.salvage.maxFrame) pass.salvage.maxFrame = nodes[2 * n + 1];
    }
    if (status == DecodeStatus::kDone) {
      pass.whole = true;
      pass.salvage.end = length;
      pass.salvage.samples = decoder.stats().totalSamples;
      return pass;
    }
    // kError: out.consumed is where the failing record starts.
    if (status == DecodeStatus::kError || (out.consumed == 0 && out.eventCount == 0)) {
      pass.salvage.end = pos + out.consumed;
      return pass;
    }
    pos += out.consumed;
  }
}

}  // namespace

Salvage SalvageRecords(const uint8_t* records, size_t length, bool littleEndian, uint64_t startTimeUs) {
  for (;;) {
    Pass pass = DecodeOnce(records, length, littleEndian, startTimeUs);
    if (pass.whole) return pass.salvage;
    // Each retry is strictly shorter; a failure that does not shorten keeps nothing.
    if (pass.salvage.end >= length) return Salvage{};
    length = pass.salvage.end;
  }
}

}  // namespace tachyon
}  // namespace profpack
