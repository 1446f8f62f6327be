// Record decoding of the Tachyon reader; see reader_records.h.
#include "tachyon/read/reader_records.h"

#include <algorithm>
#include <cstring>

#include "common/error_codes.h"
#include "tachyon/read/reader_varint.h"

namespace profpack {
namespace tachyon {
namespace {

#if defined(_MSC_VER) && !defined(__clang__)
#include <stdlib.h>
constexpr bool kHostLittleEndian = true;  // every MSVC target is little-endian
inline uint64_t Swap64(uint64_t v) { return _byteswap_uint64(v); }
inline uint32_t Swap32(uint32_t v) { return _byteswap_ulong(v); }
inline void Prefetch(const void*) {}
#else
inline void Prefetch(const void* p) { __builtin_prefetch(p); }
constexpr bool kHostLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
inline uint64_t Swap64(uint64_t v) { return __builtin_bswap64(v); }
inline uint32_t Swap32(uint32_t v) { return __builtin_bswap32(v); }
#endif
constexpr size_t kEventMargin = 4;
constexpr size_t kNodeMargin = kMaxStackDepth;
constexpr uint32_t kRootPathHash = 0x2545f491;

inline uint64_t Load64(const uint8_t* p, bool swap) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return swap ? Swap64(v) : v;
}
inline uint32_t Load32(const uint8_t* p, bool swap) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return swap ? Swap32(v) : v;
}

}  // namespace

RecordDecoder::RecordDecoder(bool fileLittleEndian, uint64_t startTimeUs, uint32_t threadCount, uint64_t totalSize,
                             size_t maxNodes)
    : swap_(fileLittleEndian != kHostLittleEndian),
      startTimeUs_(startTimeUs),
      threadCount_(threadCount),
      total_(totalSize),
      maxNodes_(maxNodes),
      threadSlots_(64, -1),
      nodeSlots_(InitialNodeSlots(totalSize), NodeSlot{0, 0, 0, 0}) {
  // Growing these while decoding costs more than the decoding of a small region.
  nodeParent_.reserve(nodeSlots_.size() / 2);
  nodeFrame_.reserve(nodeSlots_.size() / 2);
}

size_t RecordDecoder::InitialNodeSlots(uint64_t totalSize) {
  // Real profiles create far fewer nodes than bytes; start near that, cap the guess.
  size_t slots = 2048;
  while (slots < (1u << 18) && slots < totalSize / 8) slots *= 2;
  return slots;
}

uint64_t RecordDecoder::HashThread(uint64_t id, uint32_t interp) {
  uint64_t h = (id ^ 0x27d4eb2f165667c5ull) * 0x9e3779b97f4a7c15ull;
  h ^= (static_cast<uint64_t>(interp) + 0x165667b1ull) * 0xc2b2ae3d27d4eb4full;
  return h ^ (h >> 29);
}

uint32_t RecordDecoder::PathHash(uint32_t parentPath, uint32_t frame) {
  const uint64_t h = ((static_cast<uint64_t>(parentPath) << 32) | frame) * 0x9e3779b97f4a7c15ull;
  return static_cast<uint32_t>(h >> 32) ^ static_cast<uint32_t>(h >> 7);
}

int64_t RecordDecoder::FindThread(uint64_t id, uint32_t interp, size_t& slot) const {
  const size_t mask = threadSlots_.size() - 1;
  size_t i = HashThread(id, interp) & mask;
  for (;;) {
    const int32_t t = threadSlots_[i];
    if (t < 0) {
      slot = i;
      return -1;
    }
    if (threads_[t].id == id && threads_[t].interp == interp) return t;
    i = (i + 1) & mask;
  }
}

uint32_t RecordDecoder::AddThread(size_t slot, uint64_t id, uint32_t interp) {
  const uint32_t t = static_cast<uint32_t>(threads_.size());
  threads_.push_back(Thread{id, interp, 0, startTimeUs_});
  paths_.resize(threads_.size() * kPathStride, 0);
  pathHashes_.resize(threads_.size() * kPathStride, kRootPathHash);
  threadSlots_[slot] = static_cast<int32_t>(t);
  if (threads_.size() * 2 > threadSlots_.size()) GrowThreadSlots();
  return t;
}

void RecordDecoder::GrowThreadSlots() {
  std::vector<int32_t> slots(threadSlots_.size() * 2, -1);
  const size_t mask = slots.size() - 1;
  for (size_t t = 0; t < threads_.size(); ++t) {
    size_t i = HashThread(threads_[t].id, threads_[t].interp) & mask;
    while (slots[i] >= 0) i = (i + 1) & mask;
    slots[i] = static_cast<int32_t>(t);
  }
  threadSlots_.swap(slots);
}

void RecordDecoder::GrowNodeSlots() {
  std::vector<NodeSlot> slots(nodeSlots_.size() * 2, NodeSlot{0, 0, 0, 0});
  const size_t mask = slots.size() - 1;
  for (const NodeSlot& slot : nodeSlots_) {
    if (slot.node == 0) continue;
    size_t i = slot.pathHash & mask;
    while (slots[i].node != 0) i = (i + 1) & mask;
    slots[i] = slot;
  }
  nodeSlots_.swap(slots);
}

uint32_t RecordDecoder::Child(uint32_t parent, uint32_t frame, uint32_t pathHash) {
  const size_t mask = nodeSlots_.size() - 1;
  size_t i = pathHash & mask;
  for (;;) {
    const NodeSlot& slot = nodeSlots_[i];
    if (slot.node == 0) break;
    if (slot.parent == parent && slot.frame == frame) return slot.node;
    i = (i + 1) & mask;
  }
  const uint32_t node = static_cast<uint32_t>(nodeParent_.size());
  nodeParent_.push_back(parent);
  nodeFrame_.push_back(frame);
  nodeSlots_[i] = NodeSlot{parent, frame, node, pathHash};
  if (nodeParent_.size() * 2 > nodeSlots_.size()) GrowNodeSlots();
  DecodeOutput& out = *out_;
  out.nodes[out.nodeCount * 2] = parent;
  out.nodes[out.nodeCount * 2 + 1] = frame;
  ++out.nodeCount;
  return node;
}

void RecordDecoder::Build(uint32_t t, uint32_t keep, uint32_t n) {
  uint32_t* path = &paths_[static_cast<size_t>(t) * kPathStride];
  uint32_t* hashes = &pathHashes_[static_cast<size_t>(t) * kPathStride];
  // Every slot the suffix needs, requested at once: the lookups below depend
  // on each other (a child's key holds its parent's id), the slots do not.
  const size_t mask = nodeSlots_.size() - 1;
  uint32_t hash = hashes[keep];
  for (uint32_t k = n, d = keep + 1; k-- > 0; ++d) {
    hash = PathHash(hash, newFrames_[k]);
    hashes[d] = hash;
    Prefetch(&nodeSlots_[hash & mask]);
  }
  uint32_t node = path[keep];
  for (uint32_t k = n, d = keep + 1; k-- > 0; ++d) {
    node = Child(node, newFrames_[k], hashes[d]);
    path[d] = node;
  }
  threads_[t].depth = keep + n;
}

void RecordDecoder::PushEvent(EventKind kind, uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e) {
  uint32_t* ev = out_->events + out_->eventCount * kEventStride;
  ev[0] = static_cast<uint32_t>(kind);
  ev[1] = a;
  ev[2] = b;
  ev[3] = c;
  ev[4] = d;
  ev[5] = e;
  ++out_->eventCount;
}

void RecordDecoder::Progress() {
  PushEvent(EventKind::kProgress, static_cast<uint32_t>(replayed_), static_cast<uint32_t>(replayed_ >> 32), 0, 0);
}

void RecordDecoder::CloseBatch(uint32_t t, EventKind kind) {
  const size_t count = out_->timestampCount - batchTsStart_;
  const uint32_t node = paths_[static_cast<size_t>(t) * kPathStride + threads_[t].depth];
  // A REPEAT keeps the thread's whole stack.
  PushEvent(kind, t, node, repeatBatchStatus_, static_cast<uint32_t>(count), threads_[t].depth);
  batchTsStart_ = out_->timestampCount;
}

DecodeStatus RecordDecoder::Fail(const char* code, std::string message, uint64_t offset) {
  failure_.code = code;
  failure_.message = std::move(message);
  failure_.offset = offset;
  return DecodeStatus::kError;
}

DecodeStatus RecordDecoder::StackVarint(uint64_t offset) {
  // CPython's stack decoders leave its generic varint error in place.
  return Fail(codes::kTachyonStackVarint, "Invalid or incomplete varint in binary data", offset);
}

DecodeStatus RecordDecoder::Decode(const uint8_t* window, uint64_t windowStart, size_t length, bool final,
                                   DecodeOutput& out) {
  out_ = &out;
  out.consumed = 0;
  out.eventCount = 0;
  out.timestampCount = 0;
  out.nodeCount = 0;
  failure_ = DecodeFailure{};
  trieReset_ = MaybeResetTrie();
  const DecodeStatus status = Run(window, windowStart, length, final);
  out_ = nullptr;
  return status;
}

bool RecordDecoder::MaybeResetTrie() {
  if (nodeParent_.size() <= maxNodes_ || threads_.size() * kMaxStackDepth + kNodeMargin > out_->nodeCapacity)
    return false;
  std::vector<std::vector<uint32_t>> stacks(threads_.size());
  for (size_t t = 0; t < threads_.size(); ++t) {
    const uint32_t depth = threads_[t].depth;
    uint32_t node = paths_[t * kPathStride + depth];
    stacks[t].resize(depth);
    for (uint32_t i = 0; i < depth; ++i) {
      stacks[t][i] = nodeFrame_[node];
      node = nodeParent_[node];
    }
  }
  nodeParent_.assign(1, 0);
  nodeFrame_.assign(1, 0);
  std::fill(nodeSlots_.begin(), nodeSlots_.end(), NodeSlot{0, 0, 0, 0});
  for (size_t t = 0; t < threads_.size(); ++t) {
    std::copy(stacks[t].begin(), stacks[t].end(), newFrames_);
    Build(static_cast<uint32_t>(t), 0, static_cast<uint32_t>(stacks[t].size()));
  }
  return true;
}

DecodeStatus RecordDecoder::RepeatEntries(const uint8_t* data, size_t& pos, size_t end, uint64_t windowStart,
                                          bool final, bool& done) {
  DecodeOutput& out = *out_;
  const uint32_t t = repeatThread_;
  Thread& thread = threads_[t];
  batchTsStart_ = out.timestampCount;
  done = false;
  // The per-entry state in locals, written back before anything reads it: stored through the uint64_t timestamp
  // pointer, the members (same type) had to be reloaded and stored on every entry.
  uint64_t timestamp = thread.timestamp;
  uint64_t left = repeatLeft_;
  size_t count = out.timestampCount;
  uint64_t* const timestamps = out.timestamps;
  const size_t capacity = out.timestampCapacity;
  auto save = [&] {
    thread.timestamp = timestamp;
    repeatLeft_ = left;
    out.timestampCount = count;
  };
  while (left > 0) {
    const bool needMore = !final && end - pos < kRepeatEntryMax;
    if (needMore || count >= capacity || out.eventCount + kEventMargin > out.eventCapacity) {
      save();
      if (repeatBatchOpen_ && count > batchTsStart_) CloseBatch(t, EventKind::kSamplePart);
      out.consumed = pos;
      return needMore ? DecodeStatus::kNeedMore : DecodeStatus::kOutputFull;
    }
    size_t next = pos;
    uint64_t delta;
    // Deltas of one or two bytes inline (what a sampler's intervals take); longer ones through ReadVarU64.
    if (pos + 1 < end && data[pos] >= 0x80 && data[pos + 1] < 0x80) {
      delta = (data[pos] & 0x7fu) | (static_cast<uint64_t>(data[pos + 1]) << 7);
      next = pos + 2;
    } else if (!ReadVarU64(data, end, next, delta)) {
      save();
      return Fail(codes::kTachyonRleVarint, "Malformed varint in RLE sample data", windowStart + pos);
    }
    if (next >= end) {
      save();
      return Fail(codes::kTachyonRleTruncated, "Unexpected end of sample data in RLE", windowStart + next);
    }
    const uint8_t status = data[next];
    pos = next + 1;
    timestamp += delta;
    if (!repeatBatchOpen_ || status != repeatBatchStatus_) {
      if (repeatBatchOpen_) {
        out.timestampCount = count;
        CloseBatch(t, EventKind::kSample);
      }
      repeatBatchOpen_ = true;
      repeatBatchStatus_ = status;
      batchTsStart_ = count;
    }
    timestamps[count++] = timestamp;
    --left;
  }
  save();
  if (repeatBatchOpen_) CloseBatch(t, EventKind::kSample);
  repeatBatchOpen_ = false;
  replayed_ += repeatCount_;
  stats_.totalSamples += repeatCount_;
  if (replayed_ % kProgressInterval < repeatCount_) Progress();
  if (replayed_ % kProgressInterval == 0) Progress();
  out.consumed = pos;
  done = true;
  return DecodeStatus::kDone;
}

DecodeStatus RecordDecoder::Run(const uint8_t* data, uint64_t windowStart, size_t end, bool final) {
  DecodeOutput& out = *out_;
  size_t pos = 0;
  if (repeatLeft_ > 0) {
    bool done;
    const DecodeStatus s = RepeatEntries(data, pos, end, windowStart, final, done);
    if (!done) return s;
  }
  for (;;) {
    out.consumed = pos;
    if (pos >= end) return final ? DecodeStatus::kDone : DecodeStatus::kNeedMore;
    const uint64_t remaining = total_ - (windowStart + pos);
    if (remaining < kRecordPrefixSize) {
      return Fail(codes::kTachyonTruncatedRecord,
                  "Truncated sample data: " + std::to_string(remaining) + " trailing bytes", windowStart + pos);
    }
    if (!final && end - pos < kMaxRecordSize) return DecodeStatus::kNeedMore;
    if (out.eventCount + kEventMargin > out.eventCapacity || out.nodeCount + kNodeMargin > out.nodeCapacity ||
        out.timestampCount >= out.timestampCapacity) {
      return DecodeStatus::kOutputFull;
    }
    const size_t recordStart = pos;
    const uint64_t id = Load64(data + pos, swap_);
    const uint32_t interp = Load32(data + pos + 8, swap_);
    size_t slot = 0;
    int64_t found = FindThread(id, interp, slot);
    uint32_t t;
    if (found < 0) {
      if (threads_.size() >= threadCount_) {
        return Fail(
            codes::kTachyonThreadCount,
            "Invalid thread count: sample data contains more unique threads than declared in header (declared " +
                std::to_string(threadCount_) + ", found at least " + std::to_string(threads_.size() + 1) + ")",
            windowStart + recordStart);
      }
      t = AddThread(slot, id, interp);
      PushEvent(EventKind::kThread, interp, static_cast<uint32_t>(id), static_cast<uint32_t>(id >> 32), 0);
    } else {
      t = static_cast<uint32_t>(found);
    }
    const uint8_t encoding = data[pos + 12];
    pos += kRecordPrefixSize;
    if (encoding == static_cast<uint8_t>(RecordKind::kRepeat)) {
      uint32_t count;
      if (!ReadVarU32(data, end, pos, count)) {
        return Fail(codes::kTachyonRleCountVarint, "Malformed varint for RLE count", windowStart + pos);
      }
      const uint64_t maxPossible = (total_ - (windowStart + pos)) / 2;
      if (count > maxPossible) {
        return Fail(codes::kTachyonRleCount,
                    "Invalid RLE count " + std::to_string(count) + " exceeds maximum possible " +
                        std::to_string(maxPossible) + " for remaining data",
                    windowStart + recordStart + kRecordPrefixSize);
      }
      ++stats_.repeatRecords;
      stats_.repeatSamples += count;
      repeatLeft_ = count;
      repeatCount_ = count;
      repeatThread_ = t;
      repeatBatchOpen_ = false;
      bool done;
      const DecodeStatus s = RepeatEntries(data, pos, end, windowStart, final, done);
      if (!done) return s;
      continue;
    }
    if (encoding > static_cast<uint8_t>(RecordKind::kPopPush)) {
      return Fail(codes::kTachyonUnknownEncoding, "Unknown stack encoding: " + std::to_string(encoding),
                  windowStart + recordStart + 12);
    }
    uint64_t delta;
    size_t next = pos;
    if (!ReadVarU64(data, end, next, delta)) {
      return Fail(codes::kTachyonSampleVarint, "Malformed varint in sample data", windowStart + pos);
    }
    if (next >= end) return Fail(codes::kTachyonSampleTruncated, "Unexpected end of sample data", windowStart + next);
    Thread& thread = threads_[t];
    thread.timestamp += delta;
    const uint8_t status = data[next];
    pos = next + 1;
    uint32_t shared = 0;  // bottom frames of the thread's previous stack this one keeps (the event's last field)
    if (encoding == static_cast<uint8_t>(RecordKind::kFull)) {
      uint32_t depth;
      const size_t depthAt = pos;
      if (!ReadVarU32(data, end, pos, depth)) return StackVarint(windowStart + pos);
      if (depth > kMaxStackDepth) {
        return Fail(codes::kTachyonStackDepth,
                    "Stack depth " + std::to_string(depth) + " exceeds capacity " + std::to_string(kMaxStackDepth),
                    windowStart + depthAt);
      }
      for (uint32_t i = 0; i < depth; ++i) {
        if (!ReadVarU32(data, end, pos, newFrames_[i])) return StackVarint(windowStart + pos);
      }
      Build(t, 0, depth);
      ++stats_.fullRecords;
    } else {
      uint32_t first, n;
      const size_t firstAt = pos;
      if (!ReadVarU32(data, end, pos, first)) return StackVarint(windowStart + pos);
      if (!ReadVarU32(data, end, pos, n)) return StackVarint(windowStart + pos);
      const uint32_t depth = thread.depth;
      uint64_t keep;
      if (encoding == static_cast<uint8_t>(RecordKind::kSuffix)) {
        if (first > depth) {
          return Fail(codes::kTachyonSharedCount,
                      "Shared count " + std::to_string(first) + " exceeds current stack depth " + std::to_string(depth),
                      windowStart + firstAt);
        }
        keep = first;
      } else {
        keep = depth > first ? depth - first : 0;
      }
      const uint64_t finalDepth = keep + n;
      if (finalDepth > kMaxStackDepth) {
        return Fail(
            codes::kTachyonFinalStackDepth,
            "Final stack depth " + std::to_string(finalDepth) + " exceeds capacity " + std::to_string(kMaxStackDepth),
            windowStart + firstAt);
      }
      for (uint32_t i = 0; i < n; ++i) {
        if (!ReadVarU32(data, end, pos, newFrames_[i])) return StackVarint(windowStart + pos);
      }
      if (encoding == static_cast<uint8_t>(RecordKind::kSuffix) && n == 0 && keep < depth) {
        // CPython 3.15.2 moves the shared frames down only when it pushes new
        // ones: a SUFFIX with nothing new keeps the *top* `shared` frames.
        uint32_t node = paths_[static_cast<size_t>(t) * kPathStride + depth];
        for (uint64_t i = 0; i < keep; ++i) {
          newFrames_[i] = nodeFrame_[node];
          node = nodeParent_[node];
        }
        Build(t, 0, static_cast<uint32_t>(keep));
      } else {
        Build(t, static_cast<uint32_t>(keep), n);
        shared = static_cast<uint32_t>(keep);
      }
      if (encoding == static_cast<uint8_t>(RecordKind::kSuffix)) {
        ++stats_.suffixRecords;
      } else {
        ++stats_.popPushRecords;
      }
    }
    ++stats_.stackReconstructions;
    out.timestamps[out.timestampCount++] = thread.timestamp;
    PushEvent(EventKind::kSample, t, paths_[static_cast<size_t>(t) * kPathStride + thread.depth], status, 1, shared);
    ++replayed_;
    ++stats_.totalSamples;
    if (replayed_ % kProgressInterval == 0) Progress();
  }
}

}  // namespace tachyon
}  // namespace profpack
