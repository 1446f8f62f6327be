// Native twin of lib/tachyon/codec/blocks.ts SampleBlockWriter (with predict.ts
// PredictCoder and recent.ts RecentStackCoder): codes samples into
// version-2 sample blocks, byte for byte as the JS twin does. Pure C++.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace profpack {
namespace v2 {

class BlockEncoder {
 public:
  // kind: 4 = Predict, 6 = StackTableRecent (docs/format-v2.md §3).
  BlockEncoder(uint8_t kind, uint64_t sampleIntervalUs, uint64_t startTimeUs, uint32_t blockMaxSamples);
  ~BlockEncoder();

  // One sample; `stack` innermost first, depth <= 4,096 (format.ts V2_MAX_STACK_DEPTH, checked by the caller).
  // Returns true when the block is full and Flush() should be called.
  bool Add(uint64_t threadId, uint32_t interpreterId, uint64_t timestampUs, uint8_t status, const uint32_t* stack,
           uint32_t depth);
  // True when a sample of `depth` frames would take the pending block past 2^24 frames (format.ts
  // BLOCK_MAX_FRAMES, what readers accept): the block must be flushed first, as blocks.ts add() does.
  bool EndsBlockBefore(uint32_t depth) const;
  // True when the sample of this thread would be the first of a thread past
  // kMaxPredictThreads under prediction: Add then codes it, and every later
  // sample, with the stack table (kind 6), so the pending block must be
  // flushed first (blocks.ts SampleBlockWriter.add does the same).
  bool LeavesPredictionAt(uint64_t threadId, uint32_t interpreterId) const;
  // The pending samples as one block (empty when there are none).
  std::vector<uint8_t> Flush();

  uint64_t sampleCount() const { return sampleCount_; }
  uint32_t threadCount() const { return static_cast<uint32_t>(threads_.size()); }

 private:
  struct Thread;
  struct ThreadKey {
    uint64_t tid;
    uint32_t interp;
    bool operator==(const ThreadKey& o) const { return tid == o.tid && interp == o.interp; }
  };
  struct ThreadKeyHash {
    size_t operator()(const ThreadKey& k) const {
      return std::hash<uint64_t>()(k.tid * 0x9e3779b97f4a7c15ull ^ k.interp);
    }
  };

  void EncodePredict(Thread& thread, const uint32_t* stack, uint32_t depth);
  void LeavePrediction();
  void EncodeRecent(Thread& thread, const uint32_t* stack, uint32_t depth);

  uint8_t kind_;
  uint64_t interval_;
  uint64_t start_;
  uint32_t blockMax_;
  std::unordered_map<ThreadKey, uint32_t, ThreadKeyHash> threadIndex_;
  std::vector<std::unique_ptr<Thread>> threads_;
  // (parent, frame) → child node, as stacktable.ts's ChildTable: each node's first child in
  // arrays indexed by the parent (a new chain is all first children: written in order), the
  // others in open addressing with linear probing. std::unordered_map allocated a node per stack
  // and made writes 3× slower than version 1.
  class ChildTable {
   public:
    int64_t Get(uint32_t parent, uint32_t frame) const;
    void Set(uint32_t parent, uint32_t frame, uint32_t child);

   private:
    std::vector<uint32_t> firstChild_;  // 0 = none
    std::vector<uint32_t> firstFrame_;
    struct Slot {
      uint32_t parentPlusOne;  // 0 = empty
      uint32_t frame;
      uint32_t child;
    };
    static size_t Index(uint32_t parent, uint32_t frame, size_t mask);
    void Grow();
    std::vector<Slot> slots_ = std::vector<Slot>(1 << 12);
    size_t size_ = 0;
  };
  ChildTable children_;
  uint32_t defined_ = 0;
  // Per node (recent.ts): the last sample whose stack passed through it, and that stack's depth.
  std::vector<uint64_t> lastSeen_{0};
  std::vector<uint16_t> lastDepth_{0};
  uint64_t stacksCoded_ = 0;
  std::array<std::vector<uint8_t>, 10> columns_;
  std::vector<uint8_t> scratch_;
  uint32_t inBlock_ = 0;
  size_t inBlockFrames_ = 0;
  uint64_t sampleCount_ = 0;
};

}  // namespace v2
}  // namespace profpack
