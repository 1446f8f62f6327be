// libFuzzer target: the version-2 sample-region decoder alone
// (native/tachyon/v2/region_decoder.cc: DecodeRegion and RegionDecoder::Decode,
// with the stack decoders it runs — PredictState::Decode, StackTable::Decode,
// RecentStackTable::Decode — and model_columns.cc DecodeDeltaColumn), fast
// enough for runs of ten million executions (tachyon_v2's round trips take
// ~10 ms each under ASan).
//   mode 0: the input is a region. It is decoded whole, and again block by
//           block through one RegionDecoder (the bounded reader's windows):
//           both must keep the same samples and stop at the same error code
//           and offset, a documented one inside the region.
//   mode 1: a small region is encoded (BlockEncoder, kind 6 or 4) from a
//           sample script in the input, then up to 4 bytes of it are changed
//           (position and xor from the input) and it is decoded as in mode 0:
//           mutations that keep the block framing, which raw bytes rarely do.
//   mode 2: a model section's value column: n = byte 1 values or a documented
//           error inside the column.
// Input: byte 0 = mode (low 2 bits) and flags (bit 2: kind 4 blocks in mode 1),
// byte 1 = block size − 1 (mode 2: the value count), then the payload.
// Speed (test/fuzz/RESULTS.md): the encoder is built without coverage (build.sh's
// helpers), output buffers are reused across executions with libstdc++'s
// container annotations on (a read past a vector's size is still an ASan report),
// and windows are compared with the whole decode slice by slice.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
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
constexpr size_t kPrefix = 13;  // u64 thread_id, u32 interpreter_id, u8 kind
constexpr size_t kColumns = 10;

const std::initializer_list<const char*> kCodes = {
    codes::kV2Truncated,       codes::kV2BadBlock,       codes::kV2UndefinedBucket, codes::kV2BadCodeword,
    codes::kV2BadKeep,         codes::kV2UndefinedStack, codes::kV2StackCycle,      codes::kV2StackTooDeep,
    codes::kV2UndefinedThread, codes::kV2Limit,          codes::kVarintTruncated,   codes::kVarintOverflow};

bool Varint(const uint8_t* p, size_t size, size_t& pos, uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; shift < 35; shift += 7) {
    if (pos >= size) return false;
    const uint8_t b = p[pos++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Where the block at `pos` ends, by its framing alone (0 when the framing is cut or bad:
// the rest then goes to the decoder as one window, which must fail as the whole decode does).
size_t BlockEnd(const uint8_t* p, size_t size, size_t pos) {
  if (size - pos < kPrefix) return 0;
  size_t at = pos + kPrefix;
  uint64_t v = 0, total = 0;
  if (!Varint(p, size, at, v)) return 0;
  for (size_t c = 0; c < kColumns; ++c) {
    if (!Varint(p, size, at, v)) return 0;
    total += v;
  }
  return total <= size - at ? at + total : 0;
}

// Empties `d` for the next decode and keeps its buffers: an execution then allocates only what the
// decoder itself does.
void Reset(v2::DecodedRegion& d) {
  d.threadIds.clear();
  d.interpreterIds.clear();
  d.sampleThread.clear();
  d.timestamps.clear();
  d.statuses.clear();
  d.stackOffsets.assign(1, 0);
  d.frames.clear();
  d.error.reset();
}

// `threadsBefore`: threads defined before this output (a window's sample indices count from the region's first).
void Check(const v2::DecodedRegion& d, size_t size, size_t threadsBefore) {
  const size_t n = d.sampleThread.size();
  PROFPACK_FUZZ_CHECK(d.timestamps.size() == n && d.statuses.size() == n, "sample columns differ in length");
  PROFPACK_FUZZ_CHECK(d.interpreterIds.size() == d.threadIds.size(), "thread columns differ in length");
  PROFPACK_FUZZ_CHECK(d.stackOffsets.size() == n + 1 && d.stackOffsets.front() == 0, "bad stack offsets");
  PROFPACK_FUZZ_CHECK(d.stackOffsets.back() == d.frames.size(), "stack offsets do not end at the frames' end");
  for (size_t i = 0; i < n; ++i) {
    PROFPACK_FUZZ_CHECK(d.stackOffsets[i + 1] >= d.stackOffsets[i], "stack offsets go back");
    PROFPACK_FUZZ_CHECK(d.sampleThread[i] < threadsBefore + d.threadIds.size(), "sample of an undefined thread");
  }
  if (d.error) profpack::fuzz::CheckFormatError(*d.error, static_cast<size_t>(kBase) + size, kCodes);
}

template <typename T>
bool SameAsSlice(const std::vector<T>& whole, size_t at, const std::vector<T>& part) {
  const size_t n = part.size();
  return at <= whole.size() && n <= whole.size() - at &&
         (n == 0 || std::memcmp(whole.data() + at, part.data(), n * sizeof(T)) == 0);
}

// The decoder's outputs, kept across executions (Reset) so that the harness allocates nothing per input.
v2::DecodedRegion whole;
v2::DecodedRegion part;

// Decodes the region whole, and again block by block through one RegionDecoder (the bounded reader's windows):
// each window's output must be the next slice of the whole decode (threads, samples, stacks, offsets rebased
// to the frames before it), the slices must add up to all of it, and both must stop at the same error (code and
// offset), keeping every whole sample before it. Compared slice by slice, nothing is concatenated.
void DecodeBothWays(const uint8_t* region, size_t size) {
  Reset(whole);
  v2::DecodeRegion(region, size, kBase, kStart, kInterval, whole);
  Check(whole, size, 0);
  // One block (or none framed) would decode in one window: the same call as the whole decode.
  const size_t first = BlockEnd(region, size, 0);
  if (first == 0 || first == size) return;

  v2::RegionDecoder decoder(kStart, kInterval);
  size_t threads = 0, samples = 0, frames = 0;
  std::optional<profpack::FormatError> error;
  size_t pos = 0;
  while (pos < size && !error) {
    const size_t end = BlockEnd(region, size, pos);
    const size_t stop = end ? end : size;
    Reset(part);
    decoder.Decode(region + pos, stop - pos, kBase + static_cast<int64_t>(pos), part);
    Check(part, size, threads);
    PROFPACK_FUZZ_CHECK(SameAsSlice(whole.threadIds, threads, part.threadIds) &&
                            SameAsSlice(whole.interpreterIds, threads, part.interpreterIds),
                        "threads differ between windows and whole");
    PROFPACK_FUZZ_CHECK(SameAsSlice(whole.sampleThread, samples, part.sampleThread) &&
                            SameAsSlice(whole.timestamps, samples, part.timestamps) &&
                            SameAsSlice(whole.statuses, samples, part.statuses),
                        "samples differ between windows and whole");
    PROFPACK_FUZZ_CHECK(SameAsSlice(whole.frames, frames, part.frames), "stacks differ between windows and whole");
    for (size_t i = 1; i < part.stackOffsets.size(); ++i) {
      PROFPACK_FUZZ_CHECK(whole.stackOffsets[samples + i] == frames + part.stackOffsets[i], "stack offsets differ");
    }
    threads += part.threadIds.size();
    samples += part.sampleThread.size();
    frames += part.frames.size();
    error = part.error;
    pos = stop;
  }
  // Both stop at the first bad input and keep every whole sample before it.
  PROFPACK_FUZZ_CHECK(
      threads == whole.threadIds.size() && samples == whole.sampleThread.size() && frames == whole.frames.size(),
      "windows decode fewer threads, samples or frames than the whole region");
  PROFPACK_FUZZ_CHECK(whole.error.has_value() == error.has_value(), "windows and whole region disagree on failing");
  if (whole.error) {
    PROFPACK_FUZZ_CHECK(whole.error->code == error->code, whole.error->code + " vs " + error->code);
    PROFPACK_FUZZ_CHECK(whole.error->offset == error->offset, "error offsets differ between windows and whole");
  }
}

// Three bytes per sample (thread and status, frames kept from the thread's previous stack, new frames),
// then one byte per new frame: stacks that repeat and share prefixes, as sampled ones do.
void EncodeScript(profpack::fuzz::Params& in, uint8_t kind, uint32_t blockMax, std::vector<uint8_t>& region) {
  v2::BlockEncoder encoder(kind, kInterval, kStart, blockMax);
  // Two threads: each predicted thread costs the encoder 176 KiB and each decode 115 KiB, allocated and zeroed
  // under ASan (four threads made a run 40 % slower); two already interleave their states and definitions.
  static std::vector<uint32_t> previous[2];  // outermost first
  static std::vector<uint32_t> stack;        // innermost first
  for (std::vector<uint32_t>& path : previous) path.clear();
  uint64_t clock[2] = {kStart, kStart};
  for (int n = 0; in.rest_size() >= 3 && n < 64; ++n) {
    const uint8_t head = in.Byte();
    const uint32_t t = head & 1;
    std::vector<uint32_t>& path = previous[t];
    path.resize(in.Byte() % (path.size() + 1));
    const uint32_t fresh = in.Byte() % 24;
    for (uint32_t i = 0; i < fresh && path.size() < 256; ++i) path.push_back(in.Byte() % 48);
    clock[t] += kInterval + (head >> 3) - 16;
    stack.assign(path.rbegin(), path.rend());
    if (encoder.Add(t * 0x100000001ull, t, clock[t], (head >> 1) & 3, stack.data(),
                    static_cast<uint32_t>(stack.size()))) {
      const std::vector<uint8_t> block = encoder.Flush();
      region.insert(region.end(), block.begin(), block.end());
    }
  }
  const std::vector<uint8_t> last = encoder.Flush();
  region.insert(region.end(), last.begin(), last.end());
}

void ValueColumn(const uint8_t* column, size_t size, size_t n) {
  if (n > size) n = size;  // the JS layer refuses more values than bytes before decoding
  std::vector<double> out(n);
  try {
    const size_t used = v2::DecodeDeltaColumn(column, size, kBase, n, out.data());
    PROFPACK_FUZZ_CHECK(used <= size && used >= n, "value column used bytes outside the column");
  } catch (const profpack::FormatError& e) {
    PROFPACK_FUZZ_CHECK(e.code == codes::kV2Truncated || e.code == codes::kV2BadModel,
                        "undocumented value-column code");
    PROFPACK_FUZZ_CHECK(e.offset >= kBase && e.offset <= kBase + static_cast<int64_t>(size), "offset outside column");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profpack::fuzz::Params in(data, size);
  const uint8_t mode = in.Byte();
  const uint32_t blockMax = static_cast<uint32_t>(in.Byte()) + 1;
  switch (mode & 3) {
    case 1: {
      uint8_t patches[4][3];
      const uint8_t count = in.Byte() % 5;
      for (uint8_t i = 0; i < count; ++i)
        for (uint8_t& b : patches[i]) b = in.Byte();
      static std::vector<uint8_t> region;  // reused; a read past its size is a container-overflow report
      region.clear();
      EncodeScript(in, (mode & 4) ? 4 : 6, blockMax, region);
      for (uint8_t i = 0; i < count && !region.empty(); ++i) {
        region[(patches[i][0] | (patches[i][1] << 8)) % region.size()] ^= patches[i][2];
      }
      DecodeBothWays(region.data(), region.size());
      return 0;
    }
    case 2: ValueColumn(in.rest(), in.rest_size(), blockMax - 1); return 0;
    default: DecodeBothWays(in.rest(), in.rest_size()); return 0;
  }
}
