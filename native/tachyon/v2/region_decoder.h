// Native twin of lib/tachyon/v2/blocks.ts SampleBlockReader (with predict.ts
// and stacktable.ts): decodes a version-2 sample region (docs/format-v2.md
// §3-4) into columns. Pure C++ (no N-API), so a fuzz harness can drive it.
// Same error codes and offsets as the JS twin.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/format_error.h"

namespace profpack {
namespace v2 {

struct DecodedRegion {
  // Threads in the order the region defines them.
  std::vector<uint64_t> threadIds;
  std::vector<uint32_t> interpreterIds;
  // One entry per sample, in file order.
  std::vector<uint32_t> sampleThread;
  std::vector<uint64_t> timestamps;
  std::vector<uint8_t> statuses;
  // Sample i's stack (innermost first) is frames[stackOffsets[i] .. stackOffsets[i + 1]).
  std::vector<uint32_t> stackOffsets{0};
  std::vector<uint32_t> frames;
  // Set when decoding stopped at bad input; the samples before it are kept.
  std::optional<FormatError> error;
};

// Decodes every block of `region` (the decompressed sample region). Error
// offsets are `base` + the offset in `region`.
void DecodeRegion(const uint8_t* region, size_t size, int64_t base, uint64_t startTimeUs, uint64_t sampleIntervalUs,
                  DecodedRegion& out);

}  // namespace v2
}  // namespace profpack
