// Go 1.21 varint-delta pcvalue tables (cmd/internal/obj funcpctab writes them,
// runtime.pcvalue reads them): records (valueDelta zigzag varint, runLen
// uvarint in PC quanta) ended by a 0x00 where a valueDelta is expected, except
// in the first record, where 0x00 is the delta 0 ("value -1 at entry").
// Every read is bounds-checked; nothing here touches N-API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/error_codes.h"
#include "pctable/format.h"

namespace profpack {
namespace pctable {

// Walks the runs of a table one by one, as runtime.pcvalue's step() does.
class VarintCursor {
 public:
  VarintCursor(const uint8_t* data, size_t size, uint32_t quantum) : data_(data), size_(size), quantum_(quantum) {}

  // Moves to the next run; false at the terminator (then end() is just past it).
  bool Next() {
    if (pos_ >= size_) {
      Fail(codes::kPctableTruncated, "pcvalue table ends without its 0x00 terminator", pos_,
           "another (value delta, run length) record or the 0x00 terminator");
    }
    // Only a literal 0x00 byte terminates: runtime step() tests p[0] before decoding.
    if (data_[pos_] == 0 && !first_) {
      ++pos_;
      return false;
    }
    const uint32_t zigzag = ReadUvarint("value delta");
    // Go's int32 sum wraps; in C++ a signed overflow is undefined, so add as
    // uint32 (found by test/fuzz: UBSan, regressions/pctable/varint-value-int32-overflow.bin).
    value_ = static_cast<int32_t>(static_cast<uint32_t>(value_) + ((zigzag >> 1) ^ (0u - (zigzag & 1))));
    const size_t runStart = pos_;
    const uint32_t runQuanta = ReadUvarint("run length");
    // The compiler never emits an empty run; rejecting them keeps "first record"
    // (pcvaluetab: pos == 0) and "first PC" (runtime: pc == entry) the same rule.
    if (runQuanta == 0)
      Fail(codes::kPctableEmptyRun, "pcvalue table has a run of length 0", runStart, "a run length >= 1");
    const uint64_t end = static_cast<uint64_t>(endPc_) + static_cast<uint64_t>(runQuanta) * quantum_;
    if (end > UINT32_MAX)
      Fail(codes::kPctablePcOverflow, "pcvalue table covers more than 2^32 - 1 bytes of PCs", runStart,
           "PCs below 2^32");
    startPc_ = endPc_;
    endPc_ = static_cast<uint32_t>(end);
    first_ = false;
    return true;
  }

  int32_t value() const { return value_; }
  uint32_t startPc() const { return startPc_; }
  uint32_t endPc() const { return endPc_; }
  size_t pos() const { return pos_; }

 private:
  uint32_t ReadUvarint(const char* what) {
    const size_t start = pos_;
    if (pos_ < size_ && data_[pos_] < 0x80)
      return data_[pos_++];  // ~70% of pcvalue varints are one byte (runtime comment)
    uint32_t value = 0;
    for (unsigned i = 0; i < kMaxVarintBytes; ++i) {
      if (pos_ >= size_)
        Fail(codes::kPctableTruncated, std::string("pcvalue table ends inside a ") + what, start,
             "a varint byte without the continuation bit");
      const uint8_t byte = data_[pos_++];
      if (i == kMaxVarintBytes - 1 && byte > 0x0f) {
        Fail(codes::kPctableVarintOverflow, std::string("pcvalue ") + what + " does not fit 32 bits", start,
             "at most 5 bytes, the 5th at most 0x0f");
      }
      value |= static_cast<uint32_t>(byte & 0x7f) << (7 * i);
      if (!(byte & 0x80)) return value;
    }
    return value;  // unreachable: the 5th byte either ends the varint or fails
  }

  const uint8_t* data_;
  size_t size_;
  uint32_t quantum_;
  size_t pos_ = 0;
  bool first_ = true;
  int32_t value_ = kStartValue;
  uint32_t startPc_ = 0;
  uint32_t endPc_ = 0;
};

struct VarintRun {
  int32_t value;
  uint32_t startPc;
  uint32_t endPc;
};

struct DecodedVarintTable {
  std::vector<VarintRun> runs;
  size_t end = 0;  // just past the terminator
};

inline DecodedVarintTable DecodeVarintTable(const uint8_t* data, size_t size, uint32_t quantum) {
  DecodedVarintTable out;
  VarintCursor cursor(data, size, quantum);
  while (cursor.Next()) out.runs.push_back({cursor.value(), cursor.startPc(), cursor.endPc()});
  out.end = cursor.pos();
  return out;
}

// runtime.pcvalue's rule: the first run whose end is beyond `pc`. Reads only up
// to that run, so a table damaged after it is not noticed (as in the runtime).
inline bool LookupVarint(const uint8_t* data, size_t size, uint32_t quantum, uint64_t pc, VarintRun* hit) {
  VarintCursor cursor(data, size, quantum);
  while (cursor.Next()) {
    if (pc < cursor.endPc()) {
      if (hit != nullptr) *hit = {cursor.value(), cursor.startPc(), cursor.endPc()};
      return true;
    }
  }
  return false;
}

}  // namespace pctable
}  // namespace profpack
