// See region_decoder.h. Mirrors the JS twin step by step so that both report
// the same error code at the same offset for the same bad input.
#include "tachyon/v2/region_decoder.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "common/error_codes.h"
#include "tachyon/v2/recent_stack.h"
#include "varint/leb128.h"

namespace profpack {
namespace v2 {
namespace {

constexpr size_t kRecordPrefixSize = 13;  // u64 thread_id, u32 interpreter_id, u8 kind
constexpr uint8_t kKindPredict = 4;
constexpr uint8_t kKindStackTable = 5;
constexpr uint8_t kKindStackTableRecent = 6;
constexpr size_t kColumns = 10;
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
constexpr size_t kThreadDefinitionSize = 12;
// lib/tachyon/codec/format.ts V2_MAX_STACK_DEPTH (version 1 keeps CPython's 256) and BLOCK_MAX_FRAMES: 65,536
// stacks of 256 frames, so every block written before deeper stacks passes, and a block's frames stay bounded.
constexpr uint32_t kMaxDepth = 4096;
constexpr size_t kMaxBlockFrames = size_t{65536} * 256;
constexpr size_t kCacheSize = 1 << 14;
constexpr unsigned kTimeLowBits = 7;
constexpr uint32_t kTimeLowMask = (1u << kTimeLowBits) - 1;

[[noreturn]] void Fail(const char* code, std::string message, size_t at, std::string expected = "") {
  FailAt(code, std::move(message), at, std::move(expected));
}

[[noreturn]] void TooDeep(size_t at) {
  Fail(codes::kV2StackTooDeep, "predicted stack grows beyond " + std::to_string(kMaxDepth) + " frames", at);
}

struct PredictState {
  std::array<uint32_t, kCacheSize> cache{};
  std::array<uint8_t, kCacheSize> filled{};
  std::array<uint16_t, kCacheSize> next{};
  std::vector<uint32_t> previous;  // grown with the thread's depth, up to kMaxDepth
  uint32_t previousDepth = 0;

  void Room(size_t depth) {
    if (previous.size() < depth)
      previous.resize(std::min<size_t>(kMaxDepth, std::max<size_t>({depth, previous.size() * 2, 256})));
  }

  // predict.ts PredictDecoder.decode: appends the stack, innermost first, to `out`.
  void Decode(Span& src, std::vector<uint32_t>& out) {
    const size_t keepAt = src.pos;
    const uint32_t keep = src.U32();
    if (keep > previousDepth)
      Fail(codes::kV2BadKeep, "predicted stack keeps more frames than the thread's previous stack has", keepAt);
    const size_t countAt = src.pos;
    const uint32_t ncodes = src.U32();
    if (static_cast<uint64_t>(ncodes) * 2 > src.remaining())
      Fail(codes::kV2Truncated, "codewords cannot fit in the bytes left", countAt);
    uint32_t depth = keep;
    uint32_t predictor = 0;
    for (uint32_t c = 0; c < ncodes; ++c) {
      const size_t at = src.pos;
      const uint16_t word = src.U16("codeword");
      const uint32_t bucket = word >> 2;
      const uint32_t tag = word & 3;
      next[predictor] = static_cast<uint16_t>(bucket);
      if (tag == 3) {
        const uint32_t frame = src.U32();
        if (depth >= kMaxDepth) TooDeep(at);
        Room(depth + 1);
        cache[bucket] = frame;
        filled[bucket] = 1;
        previous[depth++] = frame;
        predictor = bucket;
        continue;
      }
      if (!filled[bucket]) Fail(codes::kV2UndefinedBucket, "codeword uses a cache bucket no miss has filled", at);
      if (depth >= kMaxDepth) TooDeep(at);
      Room(depth + 1);
      previous[depth++] = cache[bucket];
      uint32_t run = tag;
      if (tag == 2) {
        run = src.U8("prediction count");
        if (run < 2) Fail(codes::kV2BadCodeword, "a hit-N codeword counts fewer than 2 predictions", src.pos - 1);
      }
      if (depth + run > kMaxDepth) TooDeep(at);
      Room(depth + run);
      uint32_t p = bucket;
      for (uint32_t k = 0; k < run; ++k) {
        p = next[p];
        if (!filled[p])
          Fail(codes::kV2UndefinedBucket, "prediction chain reaches a cache bucket no miss has filled", at);
        previous[depth++] = cache[p];
      }
      predictor = p;
    }
    previousDepth = depth;
    for (uint32_t i = 0; i < depth; ++i) out.push_back(previous[depth - 1 - i]);
  }
};

// stacktable.ts StackTableDecoder.
struct StackTable {
  std::vector<uint32_t> parent{0};
  std::vector<uint32_t> frame{0};
  std::vector<uint16_t> depth{0};
  uint32_t defined = 0;

  void Decode(Span& stacks, Span& stacksHigh, Span& parents, Span& parentsHigh, Span& frames,
              std::vector<uint32_t>& out) {
    const size_t refAt = stacks.pos;
    const uint32_t low = stacks.U8("stack ref");
    const uint32_t high = stacksHigh.U32();
    if (high >= 0x1000000u) Fail(codes::kV2UndefinedStack, "stack ref does not fit u32", stacksHigh.pos);
    const uint32_t ref = high * 256 + low;
    if (ref > defined) {
      const uint32_t k = ref - defined;
      if (k > frames.remaining())
        Fail(codes::kV2UndefinedStack, "stack ref names more new definitions than the frames column holds", refAt);
      const size_t distanceAt = parents.pos;
      const uint64_t distance = parents.U8("parent distance") + static_cast<uint64_t>(parentsHigh.U32()) * 256;
      if (distance == 0) Fail(codes::kV2StackCycle, "a stack is defined as its own parent", distanceAt);
      if (distance > static_cast<uint64_t>(defined) + 1)
        Fail(codes::kV2UndefinedStack, "a stack names a parent that is not defined", distanceAt);
      uint32_t p = static_cast<uint32_t>(defined + 1 - distance);
      if (static_cast<uint32_t>(depth[p]) + k > kMaxDepth)
        Fail(codes::kV2StackTooDeep, "stack would have more than " + std::to_string(kMaxDepth) + " frames", refAt);
      parent.resize(static_cast<size_t>(ref) + 1);
      frame.resize(static_cast<size_t>(ref) + 1);
      depth.resize(static_cast<size_t>(ref) + 1);
      for (uint32_t n = defined + 1; n <= ref; ++n) {
        parent[n] = p;
        frame[n] = frames.U32();
        depth[n] = static_cast<uint16_t>(depth[p] + 1);
        p = n;
      }
      defined = ref;
    }
    uint32_t id = ref;
    const uint32_t d = depth[id];
    for (uint32_t i = 0; i < d; ++i) {
      out.push_back(frame[id]);
      id = parent[id];
    }
  }
};

struct Thread {
  uint64_t last;
  std::unique_ptr<PredictState> predict;
};

}  // namespace

// The state a region keeps across blocks (and across Decode calls).
struct RegionDecoder::State {
  uint64_t start;
  uint64_t interval;
  std::vector<Thread> threads;
  StackTable table;
  RecentStackTable recent;
  size_t predictThreads = 0;
  bool failed = false;
};

namespace {

void DecodeBlocks(RegionDecoder::State& state, const uint8_t* region, size_t size, DecodedRegion& out) {
  std::vector<Thread>& threads = state.threads;
  StackTable& table = state.table;
  RecentStackTable& recent = state.recent;
  const uint64_t start = state.start;
  const uint64_t interval = state.interval;
  size_t pos = 0;
  while (pos < size) {
    const size_t blockAt = pos;
    if (size - pos < kRecordPrefixSize) Fail(codes::kV2Truncated, "trailing bytes cannot hold a record prefix", pos);
    for (size_t i = 0; i < kRecordPrefixSize - 1; ++i) {
      if (region[pos + i] != 0) Fail(codes::kV2BadBlock, "a sample block names a thread in its record prefix", pos + i);
    }
    const uint8_t kind = region[pos + kRecordPrefixSize - 1];
    if (kind != kKindPredict && kind != kKindStackTable && kind != kKindStackTableRecent)
      Fail(codes::kV2BadBlock, "unknown record kind in a version-2 sample region", pos + kRecordPrefixSize - 1);
    pos += kRecordPrefixSize;
    const uint32_t count = leb128::DecodeU32(region, size, pos);
    uint64_t lengths[kColumns];
    uint64_t total = 0;
    for (size_t c = 0; c < kColumns; ++c) {
      lengths[c] = leb128::DecodeU32(region, size, pos);
      total += lengths[c];
    }
    if (total > size - pos) Fail(codes::kV2Truncated, "block columns need more bytes than are left", blockAt);
    const bool stackTable = kind != kKindPredict;
    for (int fixed : {static_cast<int>(kDeltas), static_cast<int>(kStatuses), static_cast<int>(kStacks)}) {
      if (fixed == kStacks && !stackTable) continue;
      if (lengths[fixed] != count)
        Fail(codes::kV2BadBlock, "a one-byte-per-sample column has the wrong length", blockAt);
    }
    const size_t blockFrames = out.frames.size();
    Span cols[kColumns];
    size_t at = pos;
    for (size_t c = 0; c < kColumns; ++c) {
      cols[c] = Span{region, at, at + static_cast<size_t>(lengths[c])};
      at += static_cast<size_t>(lengths[c]);
    }
    for (uint32_t s = 0; s < count; ++s) {
      const size_t threadAt = cols[kThreads].pos;
      const uint32_t index = cols[kThreads].U32();
      if (index > threads.size())
        Fail(codes::kV2UndefinedThread, "sample names a thread that is not defined", threadAt);
      if (index == threads.size()) {
        Span& defs = cols[kThreadDefinitions];
        if (defs.remaining() < kThreadDefinitionSize)
          Fail(codes::kV2Truncated, "thread definition cut off by the end of its column", defs.pos);
        uint64_t tid;
        uint32_t interp;
        std::memcpy(&tid, region + defs.pos, 8);  // little-endian hosts (checked by the glue)
        std::memcpy(&interp, region + defs.pos + 8, 4);
        defs.pos += kThreadDefinitionSize;
        out.threadIds.push_back(tid);
        out.interpreterIds.push_back(interp);
        threads.push_back(Thread{start, nullptr});
      }
      Thread& thread = threads[index];
      const size_t stackAt = cols[kStacks].pos;
      if (!stackTable) {
        if (!thread.predict) {
          // Lazily, and capped: each state is 115 KiB (predict.ts MAX_PREDICT_THREADS).
          if (state.predictThreads >= kMaxPredictThreads) {
            Fail(codes::kV2Limit, "more threads use stack prediction than a reader keeps state for", threadAt,
                 "at most " + std::to_string(kMaxPredictThreads) + " predicted threads");
          }
          thread.predict = std::make_unique<PredictState>();
          ++state.predictThreads;
        }
        thread.predict->Decode(cols[kStacks], out.frames);
      } else if (kind == kKindStackTableRecent) {
        recent.Frames(
            recent.Decode(cols[kStacks], cols[kStacksHigh], cols[kParents], cols[kParentsHigh], cols[kStackFrames]),
            out.frames);
      } else {
        table.Decode(cols[kStacks], cols[kStacksHigh], cols[kParents], cols[kParentsHigh], cols[kStackFrames],
                     out.frames);
      }
      if (out.frames.size() - blockFrames > kMaxBlockFrames) {
        Fail(codes::kV2Limit, "a block's stacks pass " + std::to_string(kMaxBlockFrames) + " frames", stackAt,
             "at most " + std::to_string(kMaxBlockFrames) + " frames in a block (what writers make)");
      }
      Span& deltas = cols[kDeltas];
      const uint32_t low = region[deltas.pos++];
      if (low > kTimeLowMask) Fail(codes::kV2BadBlock, "time code low part exceeds 7 bits", deltas.pos - 1);
      Span& high = cols[kDeltasHigh];
      const size_t highAt = high.pos;
      const uint64_t highPart = high.U64();
      if (highPart > (UINT64_MAX >> kTimeLowBits))
        Fail(codes::kV2BadBlock, "time code high part makes the code exceed u64", highAt);
      const uint64_t zz = (highPart << kTimeLowBits) | low;
      const uint64_t x = (zz >> 1) ^ (~(zz & 1) + 1);  // zigzag decode, as u64 two's complement
      thread.last = thread.last + interval + x;        // u64 wrap, as the JS twin's & (2^64 − 1)
      out.sampleThread.push_back(index);
      out.timestamps.push_back(thread.last);
      out.statuses.push_back(cols[kStatuses].data[cols[kStatuses].pos++]);
      out.stackOffsets.push_back(static_cast<uint32_t>(out.frames.size()));
    }
    for (size_t c = 0; c < kColumns; ++c) {
      if (cols[c].remaining() != 0) Fail(codes::kV2BadBlock, "bytes left over in a column of a block", cols[c].pos);
    }
    pos = at;
  }
}

}  // namespace

RegionDecoder::RegionDecoder(uint64_t startTimeUs, uint64_t sampleIntervalUs)
    : state_(new State{startTimeUs, sampleIntervalUs, {}, {}, {}}) {}
RegionDecoder::~RegionDecoder() = default;

void RegionDecoder::Decode(const uint8_t* bytes, size_t size, int64_t base, DecodedRegion& out) {
  if (state_->failed) {
    out.error = FormatError(codes::kV2BadBlock, "the region decoder stopped at an earlier error", base, "");
    return;
  }
  try {
    DecodeBlocks(*state_, bytes, size, out);
  } catch (FormatError& e) {
    if (e.offset >= 0) e.offset += base;
    // Keep only whole samples: a failing sample may have appended part of its stack.
    out.frames.resize(out.stackOffsets.back());
    out.error = e;
    state_->failed = true;
  }
}

void DecodeRegion(const uint8_t* region, size_t size, int64_t base, uint64_t startTimeUs, uint64_t sampleIntervalUs,
                  DecodedRegion& out) {
  RegionDecoder decoder(startTimeUs, sampleIntervalUs);
  decoder.Decode(region, size, base, out);
}

}  // namespace v2
}  // namespace profpack
