// Native twin of lib/tachyon/codec/heap/decode.ts HeapSectionDecoder's records
// (docs/format-v2.md §9): decodes the records of a heap section's chunks, one
// chunk's bytes per call, keeping the threads, their live lists and the stack
// tree for the next. The chunk framing, zstd and the header's totals stay in
// the JS layer (libzstd lives in zstd-napi). Pure C++ (no N-API), so a fuzz
// harness can drive it. Same limits, error codes and offsets as the JS twin.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/format_error.h"

namespace profpack {
namespace v2 {

// lib/tachyon/codec/heap/format.ts HEAP_RECORD_MAX_OBJECTS; heap stacks keep version 1's 256 frames
// (lib/tachyon/format.ts MAX_STACK_DEPTH).
constexpr uint32_t kHeapRecordMaxObjects = 65536;
constexpr uint32_t kHeapMaxStackDepth = 256;
// heap-format.ts HEAP_MAX_THREADS: threads a section defines, at most.
constexpr uint32_t kHeapMaxThreads = 65536;

// heap-format.ts HeapRecordFlag.
enum HeapFlag : uint8_t { kHeapLive = 1, kHeapAlloc = 2, kHeapFree = 4, kHeapMemory = 8, kHeapExternal = 16 };

// What one call decoded: whole records only (a record that fails leaves nothing).
struct HeapRecords {
  // Per record, kIntsPerRecord: flags, thread index, end of its objects, end of its frees.
  static constexpr size_t kIntsPerRecord = 4;
  std::vector<uint32_t> recordInts;
  // Per record, kNumsPerRecord: time, since, short-lived, external bytes, ArrayBuffer bytes (µs and counts as the
  // JS twin's doubles, so both sum them the same way).
  static constexpr size_t kNumsPerRecord = 5;
  std::vector<double> recordNums;
  // Per object of every record, in order.
  std::vector<uint32_t> ordinals;
  std::vector<uint32_t> sizes;
  std::vector<double> allocTimesUs;  // live records' objects; 0 for allocations
  // Object i's stack (innermost first) is frames[stackOffsets[i] .. stackOffsets[i + 1]); empty: none.
  std::vector<uint32_t> stackOffsets{0};
  std::vector<uint32_t> frames;
  // Per free of every record, ascending within a record.
  std::vector<uint32_t> freed;
  // Threads defined in this call, in order (their indices follow those of earlier calls).
  std::vector<uint64_t> threadIds;
  // After this call's whole records, over every call: records, allocations, frees, live, short-lived.
  double totals[5] = {0, 0, 0, 0, 0};
  // Set when decoding stopped at bad input.
  std::optional<FormatError> error;
};

class HeapDecoder {
 public:
  struct State;
  // `maxLive`, `maxEvents`: lib/tachyon/codec/heap/limits.ts heapReadLimits, per file.
  HeapDecoder(double startTimeUs, uint32_t frameCount, double maxLive, double maxEvents);
  ~HeapDecoder();
  HeapDecoder(const HeapDecoder&) = delete;
  HeapDecoder& operator=(const HeapDecoder&) = delete;
  // Every record of one chunk. Error offsets are `base` + the offset in `bytes`. After an error every later call
  // fails.
  void Decode(const uint8_t* bytes, size_t size, int64_t base, HeapRecords& out);

 private:
  std::unique_ptr<State> state_;
};

}  // namespace v2
}  // namespace profpack
