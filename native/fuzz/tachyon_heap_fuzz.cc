// libFuzzer target: the heap section's record decoder (native/tachyon/v2/heap_decoder.h), the native twin of
// lib/tachyon/codec/heap/decode.ts. Arbitrary record bytes, cut into 1..4 chunks fed to one decoder (state carried
// across calls, as a section's chunks are): no crash, hang or allocation beyond the limits; a documented error code
// at an offset inside the chunk; and what decodes is consistent: whole records only, every free names an object its
// thread allocated and has not freed (checked against a multiset model), frees ascend within a record, stacks stay
// within 256 frames of the file's frame table, thread indices are defined, the totals count the records returned.
// Input: byte 0 = frame count, byte 1 = live limit (0: the default 2^21), byte 2 = events limit / 4 (0: the default
// 2^27), byte 3 = chunks − 1 (low 2 bits), then a u16 per cut (its position mod the payload), then the records.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error_codes.h"
#include "fuzz/fuzz_common.h"
#include "tachyon/v2/heap_decoder.h"

namespace {

namespace codes = profpack::codes;
namespace v2 = profpack::v2;

constexpr int64_t kBase = 100;  // the chunk's file offset, as the JS layer passes it

const std::initializer_list<const char*> kCodes = {
    codes::kV2BadHeap,         codes::kV2Truncated,     codes::kV2Limit,
    codes::kV2UndefinedThread, codes::kV2BadKeep,       codes::kV2UndefinedStack,
    codes::kV2StackTooDeep,    codes::kVarintTruncated, codes::kVarintOverflow};

// What the records returned so far say is live: per thread, its ordinals.
struct Model {
  std::vector<std::multiset<uint32_t>> live;
  double records = 0, allocations = 0, frees = 0, liveRecords = 0;
};

void Check(const v2::HeapRecords& r, size_t size, uint32_t frameCount, Model& m) {
  PROFPACK_FUZZ_CHECK(r.recordInts.size() % v2::HeapRecords::kIntsPerRecord == 0, "record columns");
  const size_t n = r.recordInts.size() / v2::HeapRecords::kIntsPerRecord;
  PROFPACK_FUZZ_CHECK(r.recordNums.size() == n * v2::HeapRecords::kNumsPerRecord, "record numbers");
  const size_t objects = r.ordinals.size();
  PROFPACK_FUZZ_CHECK(r.sizes.size() == objects && r.allocTimesUs.size() == objects, "object columns");
  PROFPACK_FUZZ_CHECK(r.stackOffsets.size() == objects + 1 && r.stackOffsets.back() == r.frames.size(),
                      "stack offsets do not tile the frames");
  for (size_t i = 0; i < objects; ++i)
    PROFPACK_FUZZ_CHECK(r.stackOffsets[i + 1] >= r.stackOffsets[i] &&
                            r.stackOffsets[i + 1] - r.stackOffsets[i] <= v2::kHeapMaxStackDepth,
                        "a stack over 256 frames");
  for (uint32_t f : r.frames) PROFPACK_FUZZ_CHECK(f < frameCount, "a frame outside the table");
  // Two ordinal spaces per thread: V8's sampled objects and the external ones (kHeapExternal).
  m.live.resize(m.live.size() + 2 * r.threadIds.size());
  size_t objectAt = 0, freedAt = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t* ints = &r.recordInts[k * v2::HeapRecords::kIntsPerRecord];
    const uint32_t flags = ints[0], thread = ints[1], objectEnd = ints[2], freedEnd = ints[3];
    PROFPACK_FUZZ_CHECK(thread < m.live.size() / 2, "a record of an undefined thread");
    PROFPACK_FUZZ_CHECK(objectEnd >= objectAt && objectEnd <= objects, "object ends");
    PROFPACK_FUZZ_CHECK(freedEnd >= freedAt && freedEnd <= r.freed.size(), "free ends");
    PROFPACK_FUZZ_CHECK(objectEnd - objectAt <= v2::kHeapRecordMaxObjects, "a record over 65,536 objects");
    const bool memory = flags == v2::kHeapMemory;
    PROFPACK_FUZZ_CHECK(!memory || (objectEnd == objectAt && freedEnd == freedAt), "a memory record with objects");
    PROFPACK_FUZZ_CHECK((flags & v2::kHeapFree) || freedEnd == freedAt, "frees in a record without the flag");
    std::multiset<uint32_t>& live = m.live[2 * thread + (flags & v2::kHeapExternal ? 1 : 0)];
    // Frees leave before the record's allocations join.
    for (size_t j = freedAt; j < freedEnd; ++j) {
      PROFPACK_FUZZ_CHECK(j == freedAt || r.freed[j] >= r.freed[j - 1], "frees of a record do not ascend");
      auto it = live.find(r.freed[j]);
      PROFPACK_FUZZ_CHECK(it != live.end(), "a free of an ordinal the thread does not hold in its space");
      live.erase(it);
    }
    for (size_t i = objectAt; i < objectEnd; ++i) live.insert(r.ordinals[i]);
    m.records++;
    (flags & v2::kHeapLive ? m.liveRecords : m.allocations) += objectEnd - objectAt;
    m.frees += freedEnd - freedAt;
    objectAt = objectEnd;
    freedAt = freedEnd;
  }
  PROFPACK_FUZZ_CHECK(objectAt == objects && freedAt == r.freed.size(), "objects outside every record");
  PROFPACK_FUZZ_CHECK(r.totals[0] == m.records && r.totals[1] == m.allocations && r.totals[2] == m.frees &&
                          r.totals[3] == m.liveRecords,
                      "totals differ from the records returned");
  if (r.error) profpack::fuzz::CheckFormatError(*r.error, static_cast<size_t>(kBase) + size, kCodes);
  if (r.error) PROFPACK_FUZZ_CHECK(r.error->offset >= kBase, "an error offset before the chunk");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profpack::fuzz::Params params(data, size);
  const uint32_t frameCount = params.Byte();
  const uint8_t liveByte = params.Byte();
  const uint8_t eventsByte = params.Byte();
  const double maxLive = liveByte == 0 ? double(1 << 21) : liveByte;
  const double maxEvents = eventsByte == 0 ? double(1 << 27) : eventsByte * 4.0;
  const unsigned chunks = (params.Byte() & 3) + 1;
  std::vector<size_t> cuts;
  for (unsigned c = 1; c < chunks; ++c) cuts.push_back(params.Byte() | (params.Byte() << 8));
  const uint8_t* records = params.rest();
  const size_t length = params.rest_size();
  for (size_t& cut : cuts) cut = length == 0 ? 0 : cut % (length + 1);
  cuts.push_back(length);
  std::sort(cuts.begin(), cuts.end());

  v2::HeapDecoder decoder(1e6, frameCount, maxLive, maxEvents);
  Model model;
  size_t from = 0;
  bool failed = false;
  for (size_t cut : cuts) {
    v2::HeapRecords out;
    decoder.Decode(records + from, cut - from, kBase, out);
    if (failed) {
      PROFPACK_FUZZ_CHECK(out.error && out.recordInts.empty(), "a call after an error decoded records");
      continue;
    }
    Check(out, cut - from, frameCount, model);
    size_t liveNow = 0;
    for (const auto& l : model.live) liveNow += l.size();
    PROFPACK_FUZZ_CHECK(liveNow <= maxLive, "more objects live than the limit");
    PROFPACK_FUZZ_CHECK(model.allocations + model.liveRecords + model.frees <= maxEvents, "more events than the limit");
    failed = out.error.has_value();
    from = cut;
  }
  return 0;
}
