// See heap_decoder.h. Mirrors heap-decode.ts step by step so that both report
// the same error code at the same offset for the same bad input.
#include "tachyon/v2/heap_decoder.h"

#include <string>
#include <utility>

#include "common/error_codes.h"
#include "tachyon/v2/recent_stack.h"
#include "varint/leb128.h"

namespace profpack {
namespace v2 {
namespace {

[[noreturn]] void Bad(std::string message, size_t at, std::string expected) {
  FailAt(codes::kV2BadHeap, "heap section: " + message, at, std::move(expected));
}

[[noreturn]] void Limit(const char* what, double count, double limit, size_t at) {
  const bool live = what[0] == 'l';
  const std::string noun = live ? "sampled objects live at once" : "heap events";
  const char* env = live ? "PROFPACK_HEAP_MAX_LIVE" : "PROFPACK_HEAP_MAX_EVENTS";
  FailAt(codes::kV2Limit,
         "heap section: " + std::to_string(static_cast<int64_t>(count)) + " " + noun + ", past the limit of " +
             std::to_string(static_cast<int64_t>(limit)) + " (" + env + " raises it)",
         at, "at most " + std::to_string(static_cast<int64_t>(limit)) + " " + noun);
}

// bytes.ts ByteSource.uvarint49: at most 7 bytes.
uint64_t DecodeU49(const uint8_t* data, size_t size, size_t& pos) {
  const size_t start = pos;
  uint64_t value = 0;
  for (unsigned i = 0; i < 7; ++i) {
    if (pos >= size) leb128::ThrowTruncated(start, "u49");
    const uint8_t byte = data[pos++];
    value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) return value;
  }
  leb128::ThrowOverflow(start, "u49", "at most 7 bytes");
}

// heap-format.ts unzigzagWide, in the JS twin's doubles (z < 2^49: exact).
double UnzigzagWide(uint64_t z) { return (z & 1) ? -static_cast<double>((z + 1) / 2) : static_cast<double>(z / 2); }

uint32_t Unzigzag32(uint32_t z) { return (z >> 1) ^ (0u - (z & 1)); }

// heap-live.ts LiveList (without a payload): a treap ordered by ordinal with subtree counts, so an insert and a
// removal by position are O(log n) whatever order ordinals come in. Node 0 is the empty tree.
class LiveList {
 public:
  uint32_t size() const { return count_[root_]; }

  // After every live object with an ordinal <= `ordinal`.
  void Insert(uint32_t ordinal) {
    const uint32_t node = NewNode(ordinal);
    uint32_t low, high;
    SplitByOrdinal(root_, ordinal, low, high);
    root_ = Merge(Merge(low, node), high);
  }

  // Removes the object at position `p` (< size()); returns its ordinal.
  uint32_t RemoveAt(uint32_t p) {
    uint32_t low, rest, node, high;
    SplitByCount(root_, p, low, rest);
    SplitByCount(rest, 1, node, high);
    root_ = Merge(low, high);
    free_.push_back(node);
    return ordinal_[node];
  }

 private:
  // xorshift32 from a fixed seed: priorities do not depend on the input.
  uint32_t seed_ = 0x9e3779b9u;
  uint32_t root_ = 0;
  std::vector<uint32_t> left_{0}, right_{0}, count_{0}, priority_{0}, ordinal_{0}, free_;

  uint32_t NewNode(uint32_t ordinal) {
    uint32_t node;
    if (!free_.empty()) {
      node = free_.back();
      free_.pop_back();
    } else {
      node = static_cast<uint32_t>(left_.size());
      for (auto* column : {&left_, &right_, &count_, &priority_, &ordinal_}) column->push_back(0);
    }
    seed_ ^= seed_ << 13;
    seed_ ^= seed_ >> 17;
    seed_ ^= seed_ << 5;
    left_[node] = right_[node] = 0;
    count_[node] = 1;
    priority_[node] = seed_;
    ordinal_[node] = ordinal;
    return node;
  }

  void Update(uint32_t n) { count_[n] = count_[left_[n]] + count_[right_[n]] + 1; }

  void SplitByOrdinal(uint32_t n, uint32_t ordinal, uint32_t& low, uint32_t& high) {
    if (n == 0) {
      low = high = 0;
      return;
    }
    if (ordinal_[n] <= ordinal) {
      SplitByOrdinal(right_[n], ordinal, right_[n], high);
      low = n;
    } else {
      SplitByOrdinal(left_[n], ordinal, low, left_[n]);
      high = n;
    }
    Update(n);
  }

  void SplitByCount(uint32_t n, uint32_t k, uint32_t& first, uint32_t& rest) {
    if (n == 0) {
      first = rest = 0;
      return;
    }
    const uint32_t l = count_[left_[n]];
    if (k <= l) {
      SplitByCount(left_[n], k, first, left_[n]);
      rest = n;
    } else {
      SplitByCount(right_[n], k - l - 1, right_[n], rest);
      first = n;
    }
    Update(n);
  }

  uint32_t Merge(uint32_t a, uint32_t b) {
    if (a == 0) return b;
    if (b == 0) return a;
    if (priority_[a] > priority_[b]) {
      right_[a] = Merge(right_[a], b);
      Update(a);
      return a;
    }
    left_[b] = Merge(a, left_[b]);
    Update(b);
    return b;
  }
};

// One ordinal space of a thread: V8's sampled objects, or the external ones (Buffers, ArrayBuffers).
struct ObjectSpace {
  uint32_t previousOrdinal = 0;
  uint32_t previousSize = 0;
  LiveList live;
};

struct Thread {
  uint64_t threadId;
  ObjectSpace heap;
  ObjectSpace external;
};

}  // namespace

struct HeapDecoder::State {
  State(double startTimeUs, uint32_t frames, double live, double events)
      : timeUs(startTimeUs), frameCount(frames), maxLive(live), maxEvents(events) {}
  double timeUs;
  uint32_t frameCount;
  double maxLive;
  double maxEvents;
  std::vector<Thread> threads;
  RecentStackTable stacks = RecentStackTable(kHeapMaxStackDepth);
  double liveObjects = 0;
  double events = 0;
  double totals[5] = {0, 0, 0, 0, 0};
  bool failed = false;
};

namespace {

enum Total { kRecords, kAllocations, kFrees, kLive, kShortLived };

// heap-decode.ts HeapSectionDecoder.record: one record at `pos`, appended to `out`.
void DecodeRecord(HeapDecoder::State& s, const uint8_t* data, size_t size, size_t& pos, HeapRecords& out) {
  const size_t flagsAt = pos;
  const uint8_t flags = data[pos++];  // the caller checked a byte is left
  const uint8_t kind = flags & ~kHeapExternal;
  const bool objects = kind == kHeapLive || kind == kHeapAlloc || kind == kHeapFree || kind == (kHeapAlloc | kHeapFree);
  if (!(objects || flags == kHeapMemory)) {
    Bad("record flags " + std::to_string(flags), flagsAt,
        "live (1), alloc (2), free (4), alloc+free (6) or memory (8), the first four + external (16)");
  }
  const size_t threadAt = pos;
  const uint32_t threadIndex = leb128::DecodeU32(data, size, pos);
  if (threadIndex == s.threads.size()) {
    if (threadIndex >= kHeapMaxThreads)
      FailAt(codes::kV2Limit, "heap section: thread " + std::to_string(threadIndex + 1) + " of a file", threadAt,
             "at most " + std::to_string(kHeapMaxThreads) + " threads");
    Thread t;
    t.threadId = leb128::DecodeU64(data, size, pos);
    s.threads.push_back(std::move(t));
    out.threadIds.push_back(s.threads.back().threadId);
  } else if (threadIndex > s.threads.size()) {
    FailAt(codes::kV2UndefinedThread,
           "record names thread " + std::to_string(threadIndex) + ", " + std::to_string(s.threads.size()) + " defined",
           threadAt, "at most " + std::to_string(s.threads.size()));
  }
  Thread& thread = s.threads[threadIndex];
  ObjectSpace& t = flags & kHeapExternal ? thread.external : thread.heap;
  s.timeUs += UnzigzagWide(DecodeU49(data, size, pos));
  const size_t objectsBefore = out.ordinals.size();
  const size_t freedBefore = out.freed.size();
  auto finish = [&](double sinceUs, double shortLived, double external, double arrayBuffers) {
    out.recordInts.insert(out.recordInts.end(), {flags, threadIndex, static_cast<uint32_t>(out.ordinals.size()),
                                                 static_cast<uint32_t>(out.freed.size())});
    out.recordNums.insert(out.recordNums.end(), {s.timeUs, sinceUs, shortLived, external, arrayBuffers});
  };
  if (flags == kHeapMemory) {
    const double external = static_cast<double>(DecodeU49(data, size, pos));
    const double arrayBuffers = static_cast<double>(DecodeU49(data, size, pos));
    s.totals[kRecords]++;
    finish(s.timeUs, 0, external, arrayBuffers);
    return;
  }
  const bool live = flags & kHeapLive;
  const double sinceUs = live ? s.timeUs : s.timeUs - UnzigzagWide(DecodeU49(data, size, pos));
  const size_t countAt = pos;
  const uint32_t count = flags & (kHeapLive | kHeapAlloc) ? leb128::DecodeU32(data, size, pos) : 0;
  const double shortLived = flags & kHeapAlloc ? static_cast<double>(DecodeU49(data, size, pos)) : 0;
  const size_t freeAt = pos;
  const uint32_t freeCount = flags & kHeapFree ? leb128::DecodeU32(data, size, pos) : 0;
  if (count > kHeapRecordMaxObjects)
    FailAt(codes::kV2Limit, "a record of " + std::to_string(count) + " objects", countAt,
           "at most " + std::to_string(kHeapRecordMaxObjects));
  // The per-file bounds, before this record's columns are allocated (frees leave before allocations join).
  const double liveAfter = s.liveObjects - freeCount + count;
  if (liveAfter > s.maxLive) Limit("live", liveAfter, s.maxLive, countAt);
  const double events = s.events + count + freeCount;
  if (events > s.maxEvents) Limit("events", events, s.maxEvents, countAt);
  const uint32_t liveHere = t.live.size();
  if (freeCount > liveHere)
    Bad(std::to_string(freeCount) + " frees, " + std::to_string(liveHere) + " objects live", freeAt,
        "at most " + std::to_string(liveHere) + " frees");
  // Each object costs at least a byte of ordinals and of sizes, each free a byte of gaps.
  if (2 * static_cast<uint64_t>(count) + freeCount > size - pos)
    Bad(std::to_string(count) + " objects and " + std::to_string(freeCount) + " frees in " +
            std::to_string(size - pos) + " bytes",
        count > 0 ? countAt : freeAt, "at most " + std::to_string(size - pos) + " bytes of events");
  uint64_t lengths[5];
  uint64_t total = 0;
  for (uint64_t& length : lengths) total += length = leb128::DecodeU32(data, size, pos);
  for (uint32_t i = 0; i < count; ++i)
    out.ordinals.push_back(t.previousOrdinal += Unzigzag32(leb128::DecodeU32(data, size, pos)));
  for (uint32_t i = 0; i < count; ++i)
    out.sizes.push_back(t.previousSize += Unzigzag32(leb128::DecodeU32(data, size, pos)));
  for (uint32_t i = 0; i < count; ++i)
    out.allocTimesUs.push_back(live ? s.timeUs - UnzigzagWide(DecodeU49(data, size, pos)) : 0);
  // Frees name objects live before this record's allocations, the batch's last first.
  out.freed.resize(freedBefore + freeCount);
  int64_t cursor = liveHere;
  for (int64_t j = static_cast<int64_t>(freeCount) - 1; j >= 0; --j) {
    const size_t gapAt = pos;
    const uint32_t gap = leb128::DecodeU32(data, size, pos);
    const int64_t p = cursor - 1 - static_cast<int64_t>(gap);
    if (p < 0)
      Bad("a free skips " + std::to_string(gap) + " live objects, " + std::to_string(cursor) +
              " remain below the previous one",
          gapAt, "a gap below " + std::to_string(cursor));
    out.freed[freedBefore + static_cast<size_t>(j)] = t.live.RemoveAt(static_cast<uint32_t>(p));
    cursor = p;
  }
  if (total > size - pos)
    FailAt(codes::kV2Truncated,
           "stack columns of " + std::to_string(total) + " bytes, " + std::to_string(size - pos) + " left", pos,
           "at most " + std::to_string(size - pos) + " bytes");
  Span columns[5];
  for (size_t c = 0; c < 5; ++c) {
    columns[c] = Span{data, pos, pos + static_cast<size_t>(lengths[c])};
    pos += static_cast<size_t>(lengths[c]);
  }
  Span& stackFrames = columns[4];
  for (uint32_t i = 0; i < count; ++i) {
    const size_t framesAt = stackFrames.pos;
    const uint32_t node = s.stacks.Decode(columns[0], columns[1], columns[2], columns[3], stackFrames);
    const size_t from = out.frames.size();
    s.stacks.Frames(node, out.frames);
    for (size_t f = from; f < out.frames.size(); ++f) {
      if (out.frames[f] >= s.frameCount)
        Bad("a stack names frame " + std::to_string(out.frames[f]), framesAt,
            "a frame below " + std::to_string(s.frameCount));
    }
    out.stackOffsets.push_back(static_cast<uint32_t>(out.frames.size()));
    t.live.Insert(out.ordinals[objectsBefore + i]);
  }
  for (const Span& c : columns)
    if (c.remaining() != 0)
      Bad(std::to_string(c.remaining()) + " bytes left in a stack column", c.pos, "every column used up by its record");
  s.totals[kRecords]++;
  s.liveObjects = liveAfter;
  s.events = events;
  s.totals[live ? kLive : kAllocations] += count;
  s.totals[kFrees] += freeCount;
  s.totals[kShortLived] += shortLived;
  finish(sinceUs, shortLived, 0, 0);
}

}  // namespace

HeapDecoder::HeapDecoder(double startTimeUs, uint32_t frameCount, double maxLive, double maxEvents)
    : state_(new State(startTimeUs, frameCount, maxLive, maxEvents)) {}
HeapDecoder::~HeapDecoder() = default;

void HeapDecoder::Decode(const uint8_t* bytes, size_t size, int64_t base, HeapRecords& out) {
  State& s = *state_;
  if (s.failed) {
    out.error = FormatError(codes::kV2BadHeap, "heap section: the decoder stopped at an earlier error", base, "");
    return;
  }
  size_t pos = 0;
  size_t records = 0;
  try {
    for (; pos < size; ++records) DecodeRecord(s, bytes, size, pos, out);
  } catch (FormatError& e) {
    if (e.offset >= 0) e.offset += base;
    // Keep only whole records: the failing one may have appended part of its objects.
    const size_t objects = records == 0 ? 0 : out.recordInts[records * HeapRecords::kIntsPerRecord - 2];
    const size_t freed = records == 0 ? 0 : out.recordInts[records * HeapRecords::kIntsPerRecord - 1];
    out.ordinals.resize(objects);
    out.sizes.resize(objects);
    out.allocTimesUs.resize(objects);
    out.stackOffsets.resize(objects + 1);
    out.frames.resize(out.stackOffsets.back());
    out.freed.resize(freed);
    out.error = e;
    s.failed = true;
  }
  for (size_t i = 0; i < 5; ++i) out.totals[i] = s.totals[i];
}

}  // namespace v2
}  // namespace profpack
