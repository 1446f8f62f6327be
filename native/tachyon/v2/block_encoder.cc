// See block_encoder.h. Each step mirrors the JS twin so that the blocks are
// byte-identical (test/tachyon/codec/backends.test.ts compares them).
#include "tachyon/v2/block_encoder.h"
#include "tachyon/v2/region_decoder.h"

#include <algorithm>
#include <cstring>

namespace profpack {
namespace v2 {
namespace {

constexpr size_t kCacheSize = 1 << 14;
constexpr uint32_t kCacheMask = kCacheSize - 1;
constexpr size_t kMaxBlockFrames = size_t{65536} * 256;  // format.ts BLOCK_MAX_FRAMES
constexpr uint32_t kMaxRun = 255;                        // memtrace's hit-N cap
constexpr size_t kBlockByteLimit = 512 * 1024;           // WRITE_BUFFER_SIZE
constexpr unsigned kTimeLowBits = 7;
constexpr uint32_t kNewFramesEscape = 255;    // recent.ts K_ESCAPE
constexpr uint64_t kMaxDist = 0xffffffffull;  // recent.ts MAX_DIST: dist is a u32 in the file
enum Column {
  kThreads,
  kThreadDefinitions,
  kDeltas,
  kDeltasHigh,
  kStatuses,
  kStacks,
  kStacksHigh,
  kParents,
  kParentsHigh,
  kStackFrames
};

inline void PutU8(std::vector<uint8_t>& out, uint8_t v) { out.push_back(v); }
inline void PutU16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
inline void PutVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

// memtrace's hashes on the 64-bit product (notes/memtrace.md §4.3).
inline uint32_t Hash1(uint32_t v) {
  return static_cast<uint32_t>((static_cast<uint64_t>(v) * 0x4983723ull) >> 11) & kCacheMask;
}
inline uint32_t Hash2(uint32_t v) {
  return static_cast<uint32_t>((static_cast<uint64_t>(v) * 0xfdea731ull) >> 21) & kCacheMask;
}

}  // namespace

struct BlockEncoder::Thread {
  uint32_t index;
  uint64_t last;
  // Predict (memtrace's cache, per thread).
  std::unique_ptr<std::array<uint32_t, kCacheSize>> cache, date;
  std::unique_ptr<std::array<uint8_t, kCacheSize>> filled;
  std::unique_ptr<std::array<uint16_t, kCacheSize>> next;
  uint32_t clock = 0;
  // The previous stack, outermost first, and (stack table) the node id of each prefix: grown with the
  // thread's depth (a writer keeps one per thread it has seen, most of them shallow).
  std::vector<uint32_t> previous;
  std::vector<uint32_t> ids;
  uint32_t previousDepth = 0;
  uint64_t previousSample = 0;  // recent.ts StackPath.sample

  void Room(uint32_t depth) {
    if (previous.size() >= depth) return;
    const size_t size = std::max<size_t>({depth, previous.size() * 2, 64});
    previous.resize(size);
    ids.resize(size);
  }
};

size_t BlockEncoder::ChildTable::Index(uint32_t parent, uint32_t frame, size_t mask) {
  return ((parent ^ (frame * 0x9e3779b1u)) * 0x85ebca77u >> 7) & mask;
}

int64_t BlockEncoder::ChildTable::Get(uint32_t parent, uint32_t frame) const {
  if (parent >= firstChild_.size() || firstChild_[parent] == 0) return -1;
  if (firstFrame_[parent] == frame) return firstChild_[parent];
  const size_t mask = slots_.size() - 1;
  for (size_t i = Index(parent, frame, mask);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.parentPlusOne == 0) return -1;
    if (slot.parentPlusOne == parent + 1 && slot.frame == frame) return slot.child;
  }
}

void BlockEncoder::ChildTable::Set(uint32_t parent, uint32_t frame, uint32_t child) {
  if (parent >= firstChild_.size()) {
    const size_t size = std::max<size_t>(static_cast<size_t>(parent) + 1, firstChild_.size() * 2);
    firstChild_.resize(size);
    firstFrame_.resize(size);
  }
  if (firstChild_[parent] == 0) {
    firstChild_[parent] = child;
    firstFrame_[parent] = frame;
    return;
  }
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  size_t i = Index(parent, frame, mask);
  while (slots_[i].parentPlusOne != 0) i = (i + 1) & mask;
  slots_[i] = Slot{parent + 1, frame, child};
  ++size_;
}

void BlockEncoder::ChildTable::Grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.parentPlusOne == 0) continue;
    size_t i = Index(slot.parentPlusOne - 1, slot.frame, mask);
    while (slots_[i].parentPlusOne != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

BlockEncoder::BlockEncoder(uint8_t kind, uint64_t sampleIntervalUs, uint64_t startTimeUs, uint32_t blockMaxSamples)
    : kind_(kind), interval_(sampleIntervalUs), start_(startTimeUs), blockMax_(blockMaxSamples) {}

BlockEncoder::~BlockEncoder() = default;

bool BlockEncoder::EndsBlockBefore(uint32_t depth) const { return inBlockFrames_ + depth > kMaxBlockFrames; }

bool BlockEncoder::LeavesPredictionAt(uint64_t threadId, uint32_t interpreterId) const {
  return kind_ == 4 && threads_.size() >= kMaxPredictThreads &&
         threadIndex_.find(ThreadKey{threadId, interpreterId}) == threadIndex_.end();
}

void BlockEncoder::LeavePrediction() {
  // Readers keep prediction state for at most kMaxPredictThreads threads: the rest of the file uses the stack table.
  kind_ = 6;
  for (auto& t : threads_) {
    t->cache.reset();
    t->date.reset();
    t->filled.reset();
    t->next.reset();
    t->previousDepth = 0;
    t->previousSample = 0;
  }
}

void BlockEncoder::EncodePredict(Thread& t, const uint32_t* stack, uint32_t depth) {
  if (!t.cache) {
    t.cache = std::make_unique<std::array<uint32_t, kCacheSize>>();
    t.date = std::make_unique<std::array<uint32_t, kCacheSize>>();
    t.filled = std::make_unique<std::array<uint8_t, kCacheSize>>();
    t.next = std::make_unique<std::array<uint16_t, kCacheSize>>();
    t.cache->fill(0);
    t.date->fill(0);
    t.filled->fill(0);
    t.next->fill(0);
  }
  auto& cache = *t.cache;
  auto& date = *t.date;
  auto& filled = *t.filled;
  auto& next = *t.next;
  const uint32_t limit = std::min(depth, t.previousDepth);
  uint32_t keep = 0;
  while (keep < limit && t.previous[keep] == stack[depth - 1 - keep]) ++keep;
  t.Room(depth);
  const uint32_t now = ++t.clock;
  scratch_.clear();
  uint32_t ncodes = 0;
  uint32_t predictor = 0;
  int64_t j = static_cast<int64_t>(depth) - 1 - keep;
  while (j >= 0) {
    const uint32_t frame = stack[j];
    const uint32_t b1 = Hash1(frame);
    const uint32_t b2 = Hash2(frame);
    int64_t bucket = -1;
    if (filled[b1] && cache[b1] == frame) bucket = b1;
    else if (filled[b2] && cache[b2] == frame) bucket = b2;
    ++ncodes;
    if (bucket < 0) {
      const uint32_t victim = date[b1] < date[b2] ? b1 : b2;
      cache[victim] = frame;
      filled[victim] = 1;
      date[victim] = now;
      next[predictor] = static_cast<uint16_t>(victim);
      PutU16(scratch_, (victim << 2) | 3);
      PutVarint(scratch_, frame);
      predictor = victim;
      --j;
      continue;
    }
    const uint32_t b = static_cast<uint32_t>(bucket);
    date[b] = now;
    next[predictor] = static_cast<uint16_t>(b);
    --j;
    uint32_t p = b;
    uint32_t run = 0;
    while (j >= 0 && run < kMaxRun) {
      const uint32_t q = next[p];
      if (!filled[q] || cache[q] != stack[j]) break;
      ++run;
      p = q;
      --j;
    }
    if (run <= 1) {
      PutU16(scratch_, (b << 2) | run);
    } else {
      PutU16(scratch_, (b << 2) | 2);
      PutU8(scratch_, static_cast<uint8_t>(run));
    }
    predictor = p;
  }
  auto& out = columns_[kStacks];
  PutVarint(out, keep);
  PutVarint(out, ncodes);
  out.insert(out.end(), scratch_.begin(), scratch_.end());
  for (uint32_t i = 0; i < depth; ++i) t.previous[i] = stack[depth - 1 - i];
  t.previousDepth = depth;
}

void BlockEncoder::EncodeRecent(Thread& t, const uint32_t* stack, uint32_t depth) {
  t.Room(depth);
  uint32_t id = 0;
  uint32_t level = 0;
  const uint32_t limit = std::min(depth, t.previousDepth);
  while (level < limit && t.previous[level] == stack[depth - 1 - level]) {
    id = t.ids[level];
    ++level;
  }
  const uint32_t keep = level;
  // The previous stack's nodes below the kept prefix leave this thread's path.
  const uint32_t previousDepth = t.previousDepth;
  for (uint32_t l = keep; l < previousDepth; ++l) {
    const uint32_t node = t.ids[l];
    if (lastSeen_[node] < t.previousSample) {
      lastSeen_[node] = t.previousSample;
      lastDepth_[node] = static_cast<uint16_t>(previousDepth);
    }
  }
  for (; level < depth; ++level) {
    const uint32_t frame = stack[depth - 1 - level];
    const int64_t found = children_.Get(id, frame);
    if (found < 0) break;
    id = static_cast<uint32_t>(found);
    t.previous[level] = frame;
    t.ids[level] = id;
  }
  const uint64_t now = stacksCoded_++;
  const bool onPath = level == keep;
  const uint64_t dist = now - (onPath ? t.previousSample : lastSeen_[id]);
  bool intern = true;
  if (level > 0 && dist > kMaxDist) {
    level = 0;  // as recent.ts: a base more than 2^32 - 1 samples back is coded from the empty stack
    id = 0;
    intern = false;
  }
  const uint32_t k = depth - level;
  if (k >= kNewFramesEscape) {
    PutU8(columns_[kStacks], kNewFramesEscape);
    PutVarint(columns_[kStacksHigh], k - kNewFramesEscape);
  } else {
    PutU8(columns_[kStacks], static_cast<uint8_t>(k));
  }
  if (level == 0) {
    PutVarint(columns_[kParents], 0);
  } else {
    PutVarint(columns_[kParents], dist);
    PutVarint(columns_[kParentsHigh], (onPath ? previousDepth : lastDepth_[id]) - level);
  }
  if (k > 0) {
    const size_t need = static_cast<size_t>(defined_) + k + 1;
    if (lastSeen_.size() < need) {
      lastSeen_.resize(std::max(need, lastSeen_.size() * 2));
      lastDepth_.resize(lastSeen_.size());
    }
    uint32_t caller = level == 0 ? 0 : t.previous[level - 1];
    for (; level < depth; ++level) {
      const uint32_t frame = stack[depth - 1 - level];
      const int32_t delta = static_cast<int32_t>(frame - caller);
      PutVarint(columns_[kStackFrames], (static_cast<uint32_t>(delta) << 1) ^ static_cast<uint32_t>(delta >> 31));
      caller = frame;
      const uint32_t child = ++defined_;
      if (intern) children_.Set(id, frame, child);
      lastSeen_[child] = now;
      lastDepth_[child] = static_cast<uint16_t>(depth);
      id = child;
      t.previous[level] = frame;
      t.ids[level] = id;
    }
  }
  t.previousDepth = depth;
  t.previousSample = now;
}

bool BlockEncoder::Add(uint64_t threadId, uint32_t interpreterId, uint64_t timestampUs, uint8_t status,
                       const uint32_t* stack, uint32_t depth) {
  auto found = threadIndex_.find(ThreadKey{threadId, interpreterId});
  Thread* thread;
  if (found == threadIndex_.end()) {
    if (kind_ == 4 && threads_.size() >= kMaxPredictThreads) LeavePrediction();
    auto t = std::make_unique<Thread>();
    t->index = static_cast<uint32_t>(threads_.size());
    t->last = start_;
    threadIndex_.emplace(ThreadKey{threadId, interpreterId}, t->index);
    auto& defs = columns_[kThreadDefinitions];
    for (int b = 0; b < 8; ++b) defs.push_back(static_cast<uint8_t>(threadId >> (8 * b)));
    for (int b = 0; b < 4; ++b) defs.push_back(static_cast<uint8_t>(interpreterId >> (8 * b)));
    thread = t.get();
    threads_.push_back(std::move(t));
  } else {
    thread = threads_[found->second].get();
  }
  if (kind_ == 4) EncodePredict(*thread, stack, depth);
  else EncodeRecent(*thread, stack, depth);
  PutVarint(columns_[kThreads], thread->index);
  // Time code: zigzag(i64(now − last − interval)) in u64 arithmetic.
  const uint64_t x = timestampUs - thread->last - interval_;
  const uint64_t zz = (x << 1) ^ static_cast<uint64_t>(static_cast<int64_t>(x) >> 63);
  PutU8(columns_[kDeltas], static_cast<uint8_t>(zz & ((1u << kTimeLowBits) - 1)));
  PutVarint(columns_[kDeltasHigh], zz >> kTimeLowBits);
  PutU8(columns_[kStatuses], status);
  thread->last = timestampUs;
  ++sampleCount_;
  ++inBlock_;
  inBlockFrames_ += depth;
  size_t pending = 0;
  for (const auto& c : columns_) pending += c.size();
  return inBlock_ >= blockMax_ || pending >= kBlockByteLimit;
}

std::vector<uint8_t> BlockEncoder::Flush() {
  std::vector<uint8_t> block;
  if (inBlock_ == 0) return block;
  size_t total = 0;
  for (const auto& c : columns_) total += c.size();
  block.reserve(13 + 5 * 11 + total);
  block.assign(12, 0);
  block.push_back(kind_);
  PutVarint(block, inBlock_);
  for (const auto& c : columns_) PutVarint(block, c.size());
  for (auto& c : columns_) {
    block.insert(block.end(), c.begin(), c.end());
    c.clear();
  }
  inBlock_ = 0;
  inBlockFrames_ = 0;
  return block;
}

}  // namespace v2
}  // namespace profpack
