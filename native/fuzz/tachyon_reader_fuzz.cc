// libFuzzer target: the native Tachyon reader's record decoder
// (native/tachyon/reader_records.h), which replays the sample region. The
// header, tables and zstd stream are parsed in lib/tachyon (JS, covered by the
// JS mutation fuzzer); every byte of record data goes through this C++ code.
//
// Each input is replayed twice: once as one final window with large output
// buffers (as for an uncompressed file), once in small windows with small
// output buffers (as the zstd path feeds it, keeping the unconsumed tail), so
// resumption at every record and REPEAT-entry boundary is exercised. Both
// runs must end the same way (same status, error code and offset, samples
// replayed, stats) and produce the same timestamps, stack nodes and events
// (SamplePart runs merged into their Sample). Every call must make progress
// or ask for something it can be given: the harness fails on a stall.
//
// Input: byte 0 = flags (bit 0: file is little-endian; bit 1: thread count
// from byte 1 instead of "many"), byte 1 = thread count, byte 2 = window
// chunk (x 16 bytes, 0 = 1), byte 3 = output scale, then the sample region.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "tachyon/format.h"
#include "tachyon/reader_records.h"

namespace {

namespace tachyon = profpack::tachyon;
using tachyon::DecodeOutput;
using tachyon::DecodeStatus;
using tachyon::EventKind;
using tachyon::RecordDecoder;

const char* const kCodes[] = {
    "ERR_TACHYON_THREAD_COUNT",   "ERR_TACHYON_RLE_COUNT_VARINT", "ERR_TACHYON_RLE_COUNT",      "ERR_TACHYON_UNKNOWN_ENCODING",
    "ERR_TACHYON_SAMPLE_VARINT",  "ERR_TACHYON_SAMPLE_TRUNCATED", "ERR_TACHYON_STACK_DEPTH",    "ERR_TACHYON_SHARED_COUNT",
    "ERR_TACHYON_FINAL_STACK_DEPTH", "ERR_TACHYON_STACK_VARINT",  "ERR_TACHYON_RLE_VARINT",     "ERR_TACHYON_RLE_TRUNCATED",
    "ERR_TACHYON_TRUNCATED_RECORD",
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

struct Buffers {
  std::vector<uint32_t> events;
  std::vector<uint64_t> timestamps;
  std::vector<uint32_t> nodes;
  DecodeOutput out;
  Buffers(size_t eventCap, size_t tsCap, size_t nodeCap)
      : events(eventCap * tachyon::kEventStride), timestamps(tsCap), nodes(nodeCap * 2) {
    out.events = events.data();
    out.eventCapacity = eventCap;
    out.timestamps = timestamps.data();
    out.timestampCapacity = tsCap;
    out.nodes = nodes.data();
    out.nodeCapacity = nodeCap;
  }
};

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
    if (ev.kind == static_cast<uint32_t>(EventKind::kSample) || ev.kind == static_cast<uint32_t>(EventKind::kSamplePart)) {
      tsUsed += ev.d;
      if (t.pendingPart) {
        Event& open = t.events.back();
        PROFPACK_FUZZ_CHECK(open.a == ev.a && open.b == ev.b && open.c == ev.c, "SamplePart continued by another batch");
        open.d += ev.d;
      } else {
        t.events.push_back({static_cast<uint32_t>(EventKind::kSample), ev.a, ev.b, ev.c, ev.d});
      }
      t.pendingPart = ev.kind == static_cast<uint32_t>(EventKind::kSamplePart);
    } else {
      PROFPACK_FUZZ_CHECK(ev.kind == static_cast<uint32_t>(EventKind::kThread) || ev.kind == static_cast<uint32_t>(EventKind::kProgress),
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
Transcript ReplayWhole(const uint8_t* region, size_t size, bool le, uint32_t threads, size_t eventCap, size_t tsCap,
                       size_t nodeCap) {
  Transcript t;
  RecordDecoder d(le, 1000000, threads, size);
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
Transcript ReplayWindowed(const uint8_t* region, size_t size, bool le, uint32_t threads, size_t chunk, size_t eventCap,
                          size_t tsCap, size_t nodeCap) {
  Transcript t;
  RecordDecoder d(le, 1000000, threads, size);
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
    const bool progressed = b.out.consumed > 0 || b.out.eventCount > 0 || b.out.timestampCount > 0 || b.out.nodeCount > 0;
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
  PROFPACK_FUZZ_CHECK(a.code == b.code && a.offset == b.offset,
                      "windowed error " + b.code + "@" + std::to_string(b.offset) + " != " + a.code + "@" + std::to_string(a.offset));
  PROFPACK_FUZZ_CHECK(a.replayed == b.replayed, "windowed replay counts other samples");
  PROFPACK_FUZZ_CHECK(a.stats.totalSamples == b.stats.totalSamples && a.stats.repeatRecords == b.stats.repeatRecords &&
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  profpack::fuzz::Params params(input, input_size);
  const uint8_t flags = params.Byte();
  const uint8_t threadByte = params.Byte();
  const uint8_t chunkByte = params.Byte();
  const uint8_t scale = params.Byte();
  const uint8_t* region = params.rest();
  const size_t size = params.rest_size();
  const bool le = flags & 1;
  const uint32_t threads = (flags & 2) ? threadByte : 0xffffffffu;

  // The whole-window run with roomy buffers; the windowed
  // one with buffers at the documented minimums or a little above.
  const Transcript whole = ReplayWhole(region, size, le, threads, 4096, 8192, 4096);
  const size_t chunk = 16 * std::max<size_t>(1, chunkByte);
  // Scale 0 is the documented minimum (6 events, 1 timestamp, 257 nodes).
  const Transcript windowed = ReplayWindowed(region, size, le, threads, chunk, 6 + 8 * (scale & 7), 1 + 8 * ((scale >> 3) & 7),
                                             tachyon::kMaxStackDepth + 1 + 64 * (scale >> 6));
  Compare(whole, windowed);
  return 0;
}
