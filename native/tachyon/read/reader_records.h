// The sample-region record decoder of the Tachyon reader: plain C++ (no
// N-API), the twin of lib/tachyon/read/records.ts with the same contract
// (resumable windows, stack trie, event stream). See that file for the
// output layout; ../shared/notes/tachyon-format.md §3, §5, §10 for the format
// and CPython 3.15.2's replay checks, which this follows message for message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tachyon/format.h"

namespace profpack {
namespace tachyon {

enum class EventKind : uint32_t { kSample = 0, kSamplePart = 1, kThread = 2, kProgress = 3 };
enum class DecodeStatus : uint32_t { kDone = 0, kNeedMore = 1, kOutputFull = 2, kError = 3 };

inline constexpr size_t kEventStride = 6;
inline constexpr uint64_t kProgressInterval = 1000;
inline constexpr size_t kMaxRecordSize = kRecordPrefixSize + 10 + 1 + 10 + 10 + kMaxStackDepth * 10;

// Where a call writes; all owned by the caller.
struct DecodeOutput {
  uint32_t* events = nullptr;
  size_t eventCapacity = 0;  // events, not u32s
  uint64_t* timestamps = nullptr;
  size_t timestampCapacity = 0;
  uint32_t* nodes = nullptr;  // (parent, frame) pairs
  size_t nodeCapacity = 0;    // pairs
  // Counts after the call.
  size_t consumed = 0;
  size_t eventCount = 0;
  size_t timestampCount = 0;
  size_t nodeCount = 0;
};

// Output buffers that own their memory (recovery's check, the fuzz harness).
struct DecodeBuffers {
  std::vector<uint32_t> events;
  std::vector<uint64_t> timestamps;
  std::vector<uint32_t> nodes;
  DecodeOutput out;
  DecodeBuffers(size_t eventCap, size_t tsCap, size_t nodeCap)
      : events(eventCap * kEventStride), timestamps(tsCap), nodes(nodeCap * 2) {
    out.events = events.data();
    out.eventCapacity = eventCap;
    out.timestamps = timestamps.data();
    out.timestampCapacity = tsCap;
    out.nodes = nodes.data();
    out.nodeCapacity = nodeCap;
  }
};

struct DecodeFailure {
  std::string code;
  std::string message;
  uint64_t offset = 0;  // in the sample region
};

struct DecoderStats {
  uint64_t repeatRecords = 0, repeatSamples = 0, fullRecords = 0, suffixRecords = 0, popPushRecords = 0,
           totalSamples = 0, stackReconstructions = 0;
};

class RecordDecoder {
 public:
  // maxNodes: trie size beyond which it is rebuilt from the threads' current
  // stacks at the next call (bounds memory on millions of distinct stacks).
  RecordDecoder(bool fileLittleEndian, uint64_t startTimeUs, uint32_t threadCount, uint64_t totalSize,
                size_t maxNodes = size_t{1} << 22);

  // Decodes window[0, length), which starts at windowStart in the sample region.
  DecodeStatus Decode(const uint8_t* window, uint64_t windowStart, size_t length, bool final, DecodeOutput& out);

  // True when the last Decode call restarted node ids at 1 before its nodes.
  bool trieReset() const { return trieReset_; }
  const DecodeFailure& failure() const { return failure_; }
  const DecoderStats& stats() const { return stats_; }
  uint64_t replayed() const { return replayed_; }

 private:
  static constexpr size_t kPathStride = kMaxStackDepth + 1;
  struct Thread {
    uint64_t id;
    uint32_t interp;
    uint32_t depth;
    uint64_t timestamp;
  };

  DecodeStatus Run(const uint8_t* data, uint64_t windowStart, size_t end, bool final);
  bool MaybeResetTrie();
  DecodeStatus RepeatEntries(const uint8_t* data, size_t& pos, size_t end, uint64_t windowStart, bool final,
                             bool& done);
  DecodeStatus Fail(const char* code, std::string message, uint64_t offset);
  DecodeStatus StackVarint(uint64_t offset);
  int64_t FindThread(uint64_t id, uint32_t interp, size_t& slot) const;
  uint32_t AddThread(size_t slot, uint64_t id, uint32_t interp);
  uint32_t Child(uint32_t parent, uint32_t frame, uint32_t pathHash);
  void Build(uint32_t t, uint32_t keep, uint32_t n);
  void PushEvent(EventKind kind, uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e = 0);
  void CloseBatch(uint32_t t, EventKind kind);
  void Progress();
  static size_t InitialNodeSlots(uint64_t totalSize);
  static uint64_t HashThread(uint64_t id, uint32_t interp);
  static uint32_t PathHash(uint32_t parentPath, uint32_t frame);
  void GrowNodeSlots();
  void GrowThreadSlots();

  const bool swap_;
  const uint64_t startTimeUs_;
  const uint32_t threadCount_;
  const uint64_t total_;
  const size_t maxNodes_;
  bool trieReset_ = false;

  std::vector<Thread> threads_;
  std::vector<uint32_t> paths_;  // threads_.size() * kPathStride
  std::vector<int32_t> threadSlots_;
  std::vector<uint32_t> nodeParent_{0}, nodeFrame_{0};
  // The trie's hash table is keyed by a hash of the whole path (root to
  // node), not by the parent's id: Build knows every frame up front, so it
  // computes the slots of a whole suffix and prefetches them before the
  // dependent lookups run, and each slot holds its key, so a lookup touches
  // one slot (the probe chain of slot, then nodeParent_ and
  // nodeFrame_, was half of a 1 M-sample replay). node 0: an empty slot.
  struct NodeSlot {
    uint32_t parent, frame, node, pathHash;
  };
  std::vector<NodeSlot> nodeSlots_;
  std::vector<uint32_t> pathHashes_;  // beside paths_: the path hash at each depth
  uint32_t newFrames_[kMaxStackDepth];

  uint64_t replayed_ = 0;
  uint64_t repeatLeft_ = 0, repeatCount_ = 0;
  uint32_t repeatThread_ = 0;
  bool repeatBatchOpen_ = false;
  uint8_t repeatBatchStatus_ = 0;
  size_t batchTsStart_ = 0;

  DecodeOutput* out_ = nullptr;
  DecodeFailure failure_;
  DecoderStats stats_;
};

}  // namespace tachyon
}  // namespace profpack
