// The recency-referenced stack tree (lib/tachyon/codec/recent.ts
// RecentStackDecoder) and the column cursor it reads, shared by the sample
// region's decoder (region_decoder.cc, 4,096 frames) and the heap section's
// (heap_decoder.cc, version 1's 256). Errors are FormatErrors at positions in
// the cursor's buffer; the caller adds the buffer's file offset.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error_codes.h"
#include "common/format_error.h"
#include "varint/leb128.h"

namespace profpack {
namespace v2 {

[[noreturn]] inline void FailAt(const char* code, std::string message, size_t at, std::string expected = "") {
  throw FormatError(code, std::move(message), static_cast<int64_t>(at), std::move(expected));
}

// One column: [pos, end) of a buffer.
struct Span {
  const uint8_t* data;
  size_t pos;
  size_t end;
  size_t remaining() const { return end - pos; }
  uint8_t U8(const char* what) {
    if (pos >= end)
      FailAt(codes::kV2Truncated, std::string(what) + " cut off by the end of its span", pos, "one more byte");
    return data[pos++];
  }
  uint16_t U16(const char* what) {
    if (end - pos < 2)
      FailAt(codes::kV2Truncated, std::string(what) + " cut off by the end of its span", pos, "two more bytes");
    const uint16_t v = static_cast<uint16_t>(data[pos] | (data[pos + 1] << 8));
    pos += 2;
    return v;
  }
  uint32_t U32() { return leb128::DecodeU32(data, end, pos); }
  uint64_t U64() { return leb128::DecodeU64(data, end, pos); }
};

// recent.ts RecentStackDecoder: a tree of stacks, each sample's named by how
// many samples back its base is, frames cut off it, and new frames on top.
struct RecentStackTable {
  RecentStackTable() = default;
  explicit RecentStackTable(uint32_t maxDepth_) : maxDepth(maxDepth_) {}

  uint32_t maxDepth = 4096;  // lib/tachyon/codec/format.ts V2_MAX_STACK_DEPTH
  std::vector<uint32_t> parent{0};
  std::vector<uint32_t> frame{0};
  std::vector<uint16_t> depth{0};
  std::vector<uint32_t> history;  // the node of every sample so far
  uint32_t defined = 0;

  static constexpr uint32_t kNewFramesEscape = 255;  // recent.ts K_ESCAPE

  // Reads one stack; returns its node (its frames: Frames()).
  uint32_t Decode(Span& stacks, Span& stacksHigh, Span& parents, Span& parentsHigh, Span& frames) {
    const size_t kAt = stacks.pos;
    uint32_t k = stacks.U8("new frame count");
    if (k == kNewFramesEscape) {
      const uint32_t more = stacksHigh.U32();
      k = more > maxDepth ? maxDepth + 1 : k + more;  // anything over maxDepth fails below
    }
    const size_t distAt = parents.pos;
    const uint32_t dist = parents.U32();
    uint32_t base = 0;
    if (dist != 0) {
      if (dist > history.size())
        FailAt(codes::kV2UndefinedStack, "a sample names the stack of a sample before the first", distAt);
      base = history[history.size() - dist];
      const size_t popAt = parentsHigh.pos;
      const uint32_t pop = parentsHigh.U32();
      if (pop > depth[base]) FailAt(codes::kV2BadKeep, "a sample cuts more frames than its base stack has", popAt);
      for (uint32_t i = 0; i < pop; ++i) base = parent[base];
    }
    if (static_cast<uint32_t>(depth[base]) + k > maxDepth)
      FailAt(codes::kV2StackTooDeep, "stack would have more than " + std::to_string(maxDepth) + " frames", kAt);
    uint32_t id = base;
    if (k > 0) {
      if (k > frames.remaining()) FailAt(codes::kV2Truncated, "more new frames than the frames column holds", kAt);
      const size_t last = static_cast<size_t>(defined) + k;
      parent.resize(last + 1);
      frame.resize(last + 1);
      depth.resize(last + 1);
      uint32_t caller = base == 0 ? 0 : frame[base];
      for (size_t n = static_cast<size_t>(defined) + 1; n <= last; ++n) {
        const uint32_t zz = frames.U32();
        caller += (zz >> 1) ^ (0u - (zz & 1));  // u32 wrap, as the JS twin's >>> 0
        parent[n] = id;
        frame[n] = caller;
        depth[n] = static_cast<uint16_t>(depth[id] + 1);
        id = static_cast<uint32_t>(n);
      }
      defined = static_cast<uint32_t>(last);
    }
    history.push_back(id);
    return id;
  }

  // Appends node `id`'s stack, innermost first, to `out`.
  void Frames(uint32_t id, std::vector<uint32_t>& out) const {
    const uint32_t d = depth[id];
    for (uint32_t i = 0; i < d; ++i) {
      out.push_back(frame[id]);
      id = parent[id];
    }
  }
};

}  // namespace v2
}  // namespace profpack
