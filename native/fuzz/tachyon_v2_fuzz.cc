// libFuzzer target: the version-2 sample-block codecs (native/tachyon/v2):
//   op 0: DecodeRegion on arbitrary bytes (blocks of kinds 4, 5 and 6): no
//         crash or hang, a documented error code with an offset inside the
//         region, and the samples kept before an error are whole (stack
//         offsets tile the frames, no stack over 4,096 frames).
//   op 1: round trip: samples derived from the input (thread, status, time
//         step, a stack that shares a prefix with the thread's previous one,
//         as sampled stacks do) go through BlockEncoder (kind 6, or 4 with
//         flag bit 1) in blocks of 1..256 samples, and DecodeRegion must give
//         every sample back exactly.
//   op 2 (bit 0 clear, bit 2 set): a model section's value column
//         (model_columns.h): arbitrary bytes decode to n = byte 1 values or a
//         documented error inside the column; and deltas scripted from the
//         input, coded as the JS writer codes them, decode back exactly.
// Input: byte 0 = op (bit 0) and flags, byte 1 = block size − 1 (op 2: the
// value count), then the region (op 0), the sample script (op 1) or the column (op 2).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error_codes.h"
#include "fuzz/fuzz_common.h"
#include "tachyon/v2/block_encoder.h"
#include "tachyon/v2/model_columns.h"
#include "tachyon/v2/region_decoder.h"

namespace {

namespace codes = profpack::codes;
namespace v2 = profpack::v2;

constexpr int64_t kBase = 64;  // the region's file offset, as the addon passes it
constexpr uint64_t kStart = 1000000;
constexpr uint64_t kInterval = 1000;
constexpr uint32_t kMaxStackDepth = 4096;  // lib/tachyon/codec/format.ts V2_MAX_STACK_DEPTH

const std::initializer_list<const char*> kCodes = {
    codes::kV2Truncated,       codes::kV2BadBlock,       codes::kV2UndefinedBucket, codes::kV2BadCodeword,
    codes::kV2BadKeep,         codes::kV2UndefinedStack, codes::kV2StackCycle,      codes::kV2StackTooDeep,
    codes::kV2UndefinedThread, codes::kV2Limit,          codes::kVarintTruncated,   codes::kVarintOverflow};

void CheckDecoded(const v2::DecodedRegion& d, size_t size) {
  const size_t n = d.sampleThread.size();
  PROFPACK_FUZZ_CHECK(d.timestamps.size() == n && d.statuses.size() == n, "sample columns differ in length");
  PROFPACK_FUZZ_CHECK(d.stackOffsets.size() == n + 1, "stack offsets do not match the samples");
  PROFPACK_FUZZ_CHECK(d.stackOffsets.back() == d.frames.size(), "frames beyond the last whole sample");
  for (size_t i = 0; i < n; ++i) {
    PROFPACK_FUZZ_CHECK(
        d.stackOffsets[i + 1] >= d.stackOffsets[i] && d.stackOffsets[i + 1] - d.stackOffsets[i] <= kMaxStackDepth,
        "stack over 4,096 frames");
    PROFPACK_FUZZ_CHECK(d.sampleThread[i] < d.threadIds.size(), "sample of an undefined thread");
  }
  if (d.error) profpack::fuzz::CheckFormatError(*d.error, static_cast<size_t>(kBase) + size, kCodes);
}

struct Sample {
  uint64_t threadId;
  uint32_t interpreterId;
  uint64_t timestamp;
  uint8_t status;
  std::vector<uint32_t> stack;  // innermost first
};

// Three bytes per sample: thread (low 2 bits) and status (bit 2), frames kept
// from the thread's previous stack (mod its depth + 1), new frames (mod 40);
// the new frames' values come from the following bytes (mod 64, or a wide
// value when the byte is 0xff), so stacks repeat, share prefixes and recurse.
std::vector<Sample> Script(profpack::fuzz::Params& in) {
  std::vector<Sample> samples;
  std::vector<uint32_t> previous[4];  // outermost first
  uint64_t clock[4] = {kStart, kStart, kStart, kStart};
  while (in.rest_size() >= 3 && samples.size() < 4096) {
    const uint8_t head = in.Byte();
    const uint32_t t = head & 3;
    std::vector<uint32_t>& path = previous[t];
    const uint32_t keep = in.Byte() % (path.size() + 1);
    path.resize(keep);
    const uint32_t fresh = in.Byte() % 40;
    // Past 256 frames (version 1's cap) but well short of kMaxStackDepth: deep round trips stay cheap per input.
    for (uint32_t i = 0; i < fresh && path.size() < 512; ++i) {
      const uint8_t b = in.Byte();
      path.push_back(b == 0xff ? in.U32() : b % 64);
    }
    clock[t] += kInterval + (head >> 3) - 16;
    samples.push_back(Sample{t * 0x100000001ull, t & 1, clock[t], static_cast<uint8_t>((head >> 2) & 1),
                             std::vector<uint32_t>(path.rbegin(), path.rend())});
  }
  return samples;
}

void RoundTrip(profpack::fuzz::Params& in, uint8_t kind, uint32_t blockMax) {
  const std::vector<Sample> samples = Script(in);
  v2::BlockEncoder encoder(kind, kInterval, kStart, blockMax);
  std::vector<uint8_t> region;
  for (const Sample& s : samples) {
    if (encoder.Add(s.threadId, s.interpreterId, s.timestamp, s.status, s.stack.data(),
                    static_cast<uint32_t>(s.stack.size()))) {
      const std::vector<uint8_t> block = encoder.Flush();
      region.insert(region.end(), block.begin(), block.end());
    }
  }
  const std::vector<uint8_t> last = encoder.Flush();
  region.insert(region.end(), last.begin(), last.end());
  v2::DecodedRegion d;
  v2::DecodeRegion(region.data(), region.size(), kBase, kStart, kInterval, d);
  PROFPACK_FUZZ_CHECK(!d.error, d.error ? d.error->code + " " + d.error->what() : "");
  CheckDecoded(d, region.size());
  PROFPACK_FUZZ_CHECK(d.sampleThread.size() == samples.size(), "sample count changed");
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    const uint32_t t = d.sampleThread[i];
    PROFPACK_FUZZ_CHECK(d.threadIds[t] == s.threadId && d.interpreterIds[t] == s.interpreterId,
                        "thread changed at sample " + std::to_string(i));
    PROFPACK_FUZZ_CHECK(d.timestamps[i] == s.timestamp && d.statuses[i] == s.status,
                        "time or status changed at sample " + std::to_string(i));
    const std::vector<uint32_t> got(d.frames.begin() + d.stackOffsets[i], d.frames.begin() + d.stackOffsets[i + 1]);
    PROFPACK_FUZZ_CHECK(got == s.stack, "stack changed at sample " + std::to_string(i));
  }
}

}  // namespace

// Op 2: the value-column decoder on the raw bytes, then a scripted round trip.
void ValueColumn(const uint8_t* column, size_t size, size_t n) {
  if (n > size) n = size;  // the JS layer refuses more values than bytes before decoding
  std::vector<double> out(n);
  try {
    const size_t used = v2::DecodeDeltaColumn(column, size, kBase, n, out.data());
    PROFPACK_FUZZ_CHECK(used <= size && used >= n, "value column used bytes outside the column");
  } catch (const profpack::FormatError& e) {
    PROFPACK_FUZZ_CHECK(std::string(e.code) == codes::kV2Truncated || std::string(e.code) == codes::kV2BadModel,
                        "undocumented value-column error code");
    PROFPACK_FUZZ_CHECK(e.offset >= kBase && e.offset <= kBase + static_cast<int64_t>(size),
                        "value-column error offset outside the column");
  }
  // Round trip: each input byte pair is a delta in ±2^15 scaled by 2^(byte % 38), coded as model.ts codes it.
  std::vector<uint8_t> coded;
  std::vector<double> expected;
  double value = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    const int64_t delta =
        static_cast<int64_t>(static_cast<int16_t>(column[i] | (column[i + 1] << 8))) * (int64_t{1} << (column[i] % 38));
    value += static_cast<double>(delta);
    expected.push_back(value);
    uint64_t code = delta >= 0 ? static_cast<uint64_t>(delta) * 2 : static_cast<uint64_t>(-delta) * 2 - 1;
    while (code >= 0x80) {
      coded.push_back(static_cast<uint8_t>((code & 0x7f) | 0x80));
      code >>= 7;
    }
    coded.push_back(static_cast<uint8_t>(code));
  }
  std::vector<double> back(expected.size());
  const size_t used = v2::DecodeDeltaColumn(coded.data(), coded.size(), kBase, back.size(), back.data());
  PROFPACK_FUZZ_CHECK(used == coded.size(), "a coded value column was not used up");
  PROFPACK_FUZZ_CHECK(back == expected, "a coded value column did not decode to its values");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profpack::fuzz::Params in(data, size);
  const uint8_t op = in.Byte();
  const uint32_t blockMax = static_cast<uint32_t>(in.Byte()) + 1;
  if (op & 1) {
    RoundTrip(in, (op & 2) ? 4 : 6, blockMax);
    return 0;
  }
  if (op & 4) {
    ValueColumn(in.rest(), in.rest_size(), blockMax - 1);
    return 0;
  }
  v2::DecodedRegion d;
  v2::DecodeRegion(in.rest(), in.rest_size(), kBase, kStart, kInterval, d);
  CheckDecoded(d, in.rest_size());
  return 0;
}
