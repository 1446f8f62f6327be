// Native twin of lib/tachyon/codec/blocks.ts SampleBlockReader (with predict.ts
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

// Threads whose predicted-stack state (115 KiB each) a reader keeps: a file
// needing more is refused (ERR_V2_LIMIT). Writers switch to the stack table
// before they pass it (lib/tachyon/codec/format.ts MAX_PREDICT_THREADS).
constexpr size_t kMaxPredictThreads = 1024;

// A region decoded in pieces: each Decode call takes whole blocks and keeps
// the state (threads, prediction caches, stack tables) for the next call.
// `out.threadIds`/`interpreterIds` receive only the threads defined in this
// call; thread indices count from the region's first thread. After an error
// every later call fails.
class RegionDecoder {
 public:
  struct State;
  RegionDecoder(uint64_t startTimeUs, uint64_t sampleIntervalUs);
  ~RegionDecoder();
  RegionDecoder(const RegionDecoder&) = delete;
  RegionDecoder& operator=(const RegionDecoder&) = delete;
  // Error offsets are `base` + the offset in `bytes`.
  void Decode(const uint8_t* bytes, size_t size, int64_t base, DecodedRegion& out);

 private:
  std::unique_ptr<State> state_;
};

// Decodes every block of `region` (the decompressed sample region). Error
// offsets are `base` + the offset in `region`.
void DecodeRegion(const uint8_t* region, size_t size, int64_t base, uint64_t startTimeUs, uint64_t sampleIntervalUs,
                  DecodedRegion& out);

}  // namespace v2
}  // namespace profpack
