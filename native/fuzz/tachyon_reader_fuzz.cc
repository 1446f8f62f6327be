// libFuzzer target: the native Tachyon reader, open + full replay.
//
// Two kinds of input (byte 0, bit 2):
// - a sample region (bit 2 clear): fed straight to the record decoder
//   (native/tachyon/read/reader_records.h), little- or big-endian by bit 0;
// - a whole Tachyon file (bit 2 set): opened with ReaderFile (the addon's
//   mmap/read path, through a memfd), its header read as lib/tachyon does
//   (magic for the byte order, start time, thread count, string-table offset,
//   compression), the sample region taken in place (none) or decompressed
//   (zstd, with libzstd, capped: the addon gets it from zstd-napi the same
//   way), then replayed. Header and tables are validated in JS (covered by
//   the JS mutation fuzzer); here a header the harness cannot use ends the
//   input quietly.
//
// Each region is replayed twice: once as one final window with large output
// buffers (as for an uncompressed file), once in small windows with small
// output buffers (as the zstd path feeds it, keeping the unconsumed tail), so
// resumption at every record and REPEAT-entry boundary is exercised. Both
// runs must end the same way (same status, error code and offset, samples
// replayed, stats) and produce the same timestamps, stack nodes and events
// (SamplePart runs merged into their Sample). Every call must make progress
// or ask for something it can be given: the harness fails on a stall.
//
// Input: byte 0 = flags (bit 0: region is little-endian; bit 1: thread count
// from byte 1 instead of "many"; bit 2: the rest is a whole file), byte 1 =
// thread count, byte 2 = window chunk (x 16 bytes, 0 = 1), byte 3 = output
// scale, then the region or file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "common/error_codes.h"
#include "fuzz/fuzz_common.h"
#include "tachyon/format.h"
#include "tachyon/read/reader_file.h"
#include "tachyon/read/reader_records.h"

namespace {

namespace codes = profpack::codes;
namespace tachyon = profpack::tachyon;
using tachyon::DecodeOutput;
using tachyon::DecodeStatus;
using tachyon::EventKind;
using tachyon::RecordDecoder;

const char* const kCodes[] = {
    codes::kTachyonThreadCount,     codes::kTachyonRleCountVarint, codes::kTachyonRleCount,
    codes::kTachyonUnknownEncoding, codes::kTachyonSampleVarint,   codes::kTachyonSampleTruncated,
    codes::kTachyonStackDepth,      codes::kTachyonSharedCount,    codes::kTachyonFinalStackDepth,
    codes::kTachyonStackVarint,     codes::kTachyonRleVarint,      codes::kTachyonRleTruncated,
    codes::kTachyonTruncatedRecord,
};

struct Event {
  uint32_t kind, a, b, c, d;
  bool operator==(const Event& o) const { return kind == o.kind && a == o.a && b == o.b && c == o.c && d == o.d; }
};

struct Transcript {
  DecodeStatus status = DecodeStatus::kNeedMore;
  std::string code;
  uint64_t offset = 0;
  uint64_t replayed = 0;
  tachyon::DecoderStats stats;
  std::vector<Event> events;  // Sample/SamplePart batches merged
  std::vector<uint64_t> timestamps;
  std::vector<uint32_t> nodes;
  bool pendingPart = false;
};

using Buffers = tachyon::DecodeBuffers;

// On kError the timestamps of a REPEAT batch still open are not announced by
// any event (nothing is delivered for them), so only the announced ones count.
void Collect(Transcript& t, const DecodeOutput& out, DecodeStatus status) {
  PROFPACK_FUZZ_CHECK(out.eventCount <= out.eventCapacity && out.timestampCount <= out.timestampCapacity &&
                          out.nodeCount <= out.nodeCapacity,
                      "decoder reports more output than its buffers hold");
  size_t tsUsed = 0;
  for (size_t e = 0; e < out.eventCount; ++e) {
    const uint32_t* p = out.events + e * tachyon::kEventStride;
    Event ev{p[0], p[1], p[2], p[3], p[4]};
    if (ev.kind == static_cast<uint32_t>(EventKind::kSample) ||
        ev.kind == static_cast<uint32_t>(EventKind::kSamplePart)) {
      tsUsed += ev.d;
      if (t.pendingPart) {
        Event& open = t.events.back();
        PROFPACK_FUZZ_CHECK(open.a == ev.a && open.b == ev.b && open.c == ev.c,
                            "SamplePart continued by another batch");
        open.d += ev.d;
      } else {
        t.events.push_back({static_cast<uint32_t>(EventKind::kSample), ev.a, ev.b, ev.c, ev.d});
      }
      t.pendingPart = ev.kind == static_cast<uint32_t>(EventKind::kSamplePart);
    } else {
      PROFPACK_FUZZ_CHECK(ev.kind == static_cast<uint32_t>(EventKind::kThread) ||
                              ev.kind == static_cast<uint32_t>(EventKind::kProgress),
                          "unknown event kind " + std::to_string(ev.kind));
      t.events.push_back(ev);
    }
  }
  if (status == DecodeStatus::kError) {
    PROFPACK_FUZZ_CHECK(tsUsed <= out.timestampCount, "events announce timestamps that were not written");
  } else {
    PROFPACK_FUZZ_CHECK(tsUsed == out.timestampCount, "events account for " + std::to_string(tsUsed) + " timestamps, " +
                                                          std::to_string(out.timestampCount) + " written");
  }
  t.timestamps.insert(t.timestamps.end(), out.timestamps, out.timestamps + tsUsed);
  t.nodes.insert(t.nodes.end(), out.nodes, out.nodes + 2 * out.nodeCount);
}

void Finish(Transcript& t, const RecordDecoder& d, DecodeStatus status, size_t total) {
  t.status = status;
  t.replayed = d.replayed();
  t.stats = d.stats();
  if (status == DecodeStatus::kError) {
    const auto& f = d.failure();
    bool known = false;
    for (const char* c : kCodes) known = known || f.code == c;
    PROFPACK_FUZZ_CHECK(known, "unexpected error code " + f.code + ": " + f.message);
    PROFPACK_FUZZ_CHECK(f.offset <= total, "error offset past the region");
    t.code = f.code;
    t.offset = f.offset;
  }
}

// One window holding the whole region, final; drained whenever output is full.
Transcript ReplayWhole(const uint8_t* region, size_t size, bool le, uint64_t start, uint32_t threads, size_t eventCap,
                       size_t tsCap, size_t nodeCap) {
  Transcript t;
  RecordDecoder d(le, start, threads, size);
  Buffers b(eventCap, tsCap, nodeCap);
  size_t consumed = 0;
  for (;;) {
    const DecodeStatus s = d.Decode(region + consumed, consumed, size - consumed, true, b.out);
    Collect(t, b.out, s);
    consumed += b.out.consumed;
    PROFPACK_FUZZ_CHECK(consumed <= size, "consumed past the region");
    if (s == DecodeStatus::kOutputFull) {
      PROFPACK_FUZZ_CHECK(b.out.consumed > 0 || b.out.eventCount > 0 || b.out.timestampCount > 0 || b.out.nodeCount > 0,
                          "OutputFull without progress on empty buffers (would loop forever)");
      continue;
    }
    PROFPACK_FUZZ_CHECK(s != DecodeStatus::kNeedMore, "NeedMore on a final window");
    if (s == DecodeStatus::kDone) PROFPACK_FUZZ_CHECK(consumed == size, "Done before the end of the region");
    Finish(t, d, s, size);
    return t;
  }
}

// Windows of about `chunk` new bytes plus the kept tail, copied into
// exact-size buffers so a read past a window is a heap overflow.
Transcript ReplayWindowed(const uint8_t* region, size_t size, bool le, uint64_t start, uint32_t threads, size_t chunk,
                          size_t eventCap, size_t tsCap, size_t nodeCap) {
  Transcript t;
  RecordDecoder d(le, start, threads, size);
  Buffers b(eventCap, tsCap, nodeCap);
  size_t consumed = 0;
  size_t windowEnd = 0;  // bytes made available so far
  DecodeStatus last = DecodeStatus::kNeedMore;
  for (int calls = 0;; ++calls) {
    PROFPACK_FUZZ_CHECK(calls < 10000000, "too many decoder calls");
    // As the JS driver: top up unless the output was full and the tail still holds a record.
    if (last != DecodeStatus::kOutputFull || windowEnd - consumed < tachyon::kMaxRecordSize) {
      windowEnd = std::min(size, std::max(windowEnd, consumed) + chunk);
      // A non-final window always holds one whole record's worth (the JS window is chunk + 2 records).
      windowEnd = std::max(windowEnd, std::min(size, consumed + tachyon::kMaxRecordSize + 1));
    }
    const size_t length = windowEnd - consumed;
    const bool final = windowEnd == size;
    std::vector<uint8_t> window(region + consumed, region + windowEnd);
    const DecodeStatus s = d.Decode(window.data(), consumed, length, final, b.out);
    Collect(t, b.out, s);
    PROFPACK_FUZZ_CHECK(b.out.consumed <= length, "consumed past the window");
    const bool progressed =
        b.out.consumed > 0 || b.out.eventCount > 0 || b.out.timestampCount > 0 || b.out.nodeCount > 0;
    consumed += b.out.consumed;
    if (s == DecodeStatus::kOutputFull) {
      PROFPACK_FUZZ_CHECK(progressed, "OutputFull without progress on empty buffers (would loop forever)");
    } else if (s == DecodeStatus::kNeedMore) {
      PROFPACK_FUZZ_CHECK(!final, "NeedMore on a final window");
      PROFPACK_FUZZ_CHECK(progressed || length < tachyon::kMaxRecordSize + 1 + chunk,
                          "NeedMore without progress on a window that holds a whole record");
    } else {
      if (s == DecodeStatus::kDone) PROFPACK_FUZZ_CHECK(consumed == size, "Done before the end of the region");
      Finish(t, d, s, size);
      return t;
    }
    last = s;
  }
}

void Compare(const Transcript& a, const Transcript& b) {
  PROFPACK_FUZZ_CHECK(a.status == b.status, "windowed replay ends with another status");
  PROFPACK_FUZZ_CHECK(
      a.code == b.code && a.offset == b.offset,
      "windowed error " + b.code + "@" + std::to_string(b.offset) + " != " + a.code + "@" + std::to_string(a.offset));
  PROFPACK_FUZZ_CHECK(a.replayed == b.replayed, "windowed replay counts other samples");
  PROFPACK_FUZZ_CHECK(
      a.stats.totalSamples == b.stats.totalSamples && a.stats.repeatRecords == b.stats.repeatRecords &&
          a.stats.fullRecords == b.stats.fullRecords && a.stats.suffixRecords == b.stats.suffixRecords &&
          a.stats.popPushRecords == b.stats.popPushRecords && a.stats.repeatSamples == b.stats.repeatSamples,
      "windowed replay has other stats");
  PROFPACK_FUZZ_CHECK(a.nodes == b.nodes, "windowed replay has other stack nodes");
  // After an error, how much of the failing REPEAT run was delivered depends
  // on where the windows cut it; the outputs before it must still agree.
  if (a.status != DecodeStatus::kError) {
    PROFPACK_FUZZ_CHECK(a.timestamps == b.timestamps, "windowed replay has other timestamps");
    PROFPACK_FUZZ_CHECK(a.events == b.events, "windowed replay has other events");
  }
}

// Both replays of one region, compared.
void ReplayRegion(const uint8_t* region, size_t size, bool le, uint64_t start, uint32_t threads, uint8_t chunkByte,
                  uint8_t scale) {
  // The whole-window run with roomy buffers; the windowed
  // one with buffers at the documented minimums or a little above.
  const Transcript whole = ReplayWhole(region, size, le, start, threads, 4096, 8192, 4096);
  const size_t chunk = 16 * std::max<size_t>(1, chunkByte);
  // Scale 0 is the documented minimum (6 events, 1 timestamp, 257 nodes).
  const Transcript windowed =
      ReplayWindowed(region, size, le, start, threads, chunk, 6 + 8 * (scale & 7), 1 + 8 * ((scale >> 3) & 7),
                     tachyon::kMaxStackDepth + 1 + 64 * (scale >> 6));
  Compare(whole, windowed);
}

uint64_t Field(const uint8_t* p, size_t width, bool le) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t{p[le ? i : width - 1 - i]} << (8 * i);
  return v;
}

// Fuzzing budget for a decompressed region (the reader's cap is 1 GiB by
// default; the cap itself is tested in test/fuzz/resource-bounds.test.ts).
constexpr size_t kMaxInflated = size_t{8} << 20;

// The zstd region decompressed as lib/tachyon/file/regions.ts does (streaming,
// concatenated frames, capped); false when zstd refuses it or it is too large.
bool Inflate(const uint8_t* data, size_t size, std::vector<uint8_t>& out) {
  static ZSTD_DCtx* dctx = ZSTD_createDCtx();
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  out.clear();
  ZSTD_inBuffer in{data, size, 0};
  size_t last = 0;
  uint8_t chunk[1 << 16];
  for (;;) {
    ZSTD_outBuffer o{chunk, sizeof chunk, 0};
    const size_t before = in.pos;
    last = ZSTD_decompressStream(dctx, &o, &in);
    if (ZSTD_isError(last)) return false;
    if (out.size() + o.pos > kMaxInflated) return false;
    out.insert(out.end(), chunk, chunk + o.pos);
    // Input used up and the output not full: zstd holds nothing more back.
    if (in.pos == in.size && o.pos < sizeof chunk) break;
    if (o.pos == 0 && in.pos == before) break;
  }
  return last == 0;  // a frame cut short is ERR_TACHYON_ZSTD_TRUNCATED at open
}

// A whole file: through ReaderFile, as ProfileReader.open does on the native backend.
void ReplayFile(const uint8_t* input, size_t size, uint8_t chunkByte, uint8_t scale) {
  static int fd = ::memfd_create("tachyon-fuzz", 0);
  PROFPACK_FUZZ_CHECK(fd >= 0, "memfd_create failed");
  PROFPACK_FUZZ_CHECK(::ftruncate(fd, 0) == 0 && ::pwrite(fd, input, size, 0) == static_cast<ssize_t>(size),
                      "cannot fill the memfd");
  tachyon::ReaderFile file("/proc/self/fd/" + std::to_string(fd));
  PROFPACK_FUZZ_CHECK(file.size() == size, "ReaderFile size differs from the file's");
  PROFPACK_FUZZ_CHECK(size == 0 || std::memcmp(file.data(), input, size) == 0,
                      "ReaderFile bytes differ from the file's");
  const uint8_t* data = file.data();
  if (size < tachyon::kHeaderSize) return;  // ERR_TACHYON_TOO_SMALL in JS
  bool le;
  if (std::memcmp(data, "HCAT", 4) == 0) le = true;        // 0x54414348 little-endian
  else if (std::memcmp(data, "TACH", 4) == 0) le = false;  // big-endian
  else return;                                             // bad magic / not finalized
  const uint64_t start = Field(data + 12, 8, le);
  const uint32_t threads = static_cast<uint32_t>(Field(data + 36, 4, le));
  const uint64_t regionEnd = Field(data + 40, 8, le);
  const uint32_t compression = static_cast<uint32_t>(Field(data + 56, 4, le));
  if (regionEnd < tachyon::kHeaderSize || regionEnd > size) return;  // layout errors in JS
  const uint8_t* region = data + tachyon::kHeaderSize;
  const size_t regionSize = static_cast<size_t>(regionEnd) - tachyon::kHeaderSize;
  if (compression == 0) {
    ReplayRegion(region, regionSize, le, start, threads, chunkByte, scale);
  } else if (compression == 1) {
    std::vector<uint8_t> inflated;
    if (!Inflate(region, regionSize, inflated)) return;
    ReplayRegion(inflated.data(), inflated.size(), le, start, threads, chunkByte, scale);
  }
  file.Close();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  profpack::fuzz::Params params(input, input_size);
  const uint8_t flags = params.Byte();
  const uint8_t threadByte = params.Byte();
  const uint8_t chunkByte = params.Byte();
  const uint8_t scale = params.Byte();
  const uint8_t* payload = params.rest();
  const size_t size = params.rest_size();
  if (flags & 4) {
    ReplayFile(payload, size, chunkByte, scale);
    return 0;
  }
  const bool le = flags & 1;
  const uint32_t threads = (flags & 2) ? threadByte : 0xffffffffu;
  ReplayRegion(payload, size, le, 1000000, threads, chunkByte, scale);
  return 0;
}
