// The native Tachyon sample writer: a 512 KiB buffered fd writer (one write()
// per flush, as CPython 3.15.2's writer batches) and the record encoder
// (per-thread previous stack, timestamp and REPEAT run; the FULL / SUFFIX /
// POP_PUSH choice of ../shared/notes/tachyon-format.md §5). Plain C++ without
// N-API; twin of lib/tachyon/write/engines/js.ts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/error_codes.h"
#include "common/format_error.h"
#include "platform/file.h"
#include "tachyon/format.h"

namespace profpack {
namespace tachyon {

// Something records are appended to: Reserve(n) makes room for n bytes (draining
// the buffer when it is full), Commit(n) keeps them.
class RecordSink {
 public:
  explicit RecordSink(size_t capacity) : buffer_(capacity) {}
  virtual ~RecordSink() = default;
  RecordSink(const RecordSink&) = delete;
  RecordSink& operator=(const RecordSink&) = delete;

  uint8_t* Reserve(size_t n) {
    if (length_ + n > buffer_.size()) Drain();
    return buffer_.data() + length_;
  }
  void Commit(size_t n) { length_ += n; }
  size_t buffered() const { return length_; }
  void Discard() { length_ = 0; }

 protected:
  virtual void Drain() = 0;  // must leave length_ == 0
  std::vector<uint8_t> buffer_;
  size_t length_ = 0;
};

// The raw file. Holds the 64 zero header bytes, the (raw) sample region when
// not compressing, the zstd output when compressing, then tables and footer.
class FdWriter final : public RecordSink {
 public:
  explicit FdWriter(platform::Descriptor fd) : RecordSink(kWriteBufferSize), fd_(fd) {}

  void Append(const uint8_t* data, size_t n);
  void Flush();
  // Positioned write (the header patch at finalize); flushes first.
  void WriteAt(uint64_t offset, const uint8_t* data, size_t n);
  uint64_t Position() const { return flushed_ + length_; }

 protected:
  void Drain() override { Flush(); }

 private:
  void WriteAll(const uint8_t* data, size_t n, int64_t offset, const char* what);
  platform::Descriptor fd_;
  uint64_t flushed_ = 0;
};

// How a call of the compressor ends (ZSTD_EndDirective's order): keep
// buffering, flush everything fed so far into complete blocks, or end the frame.
enum class ZstdDirective : int { kContinue = 0, kFlush = 1, kEnd = 2 };

// The sample region under compression: kZstdInputSize of raw records per call
// of `compress` (libzstd lives in zstd-napi, so the N-API glue supplies it).
// The bytes zstd writes do not depend on how its input is cut between
// ZSTD_e_continue calls, so the size is free: 4 MiB, not CPython's 512 KiB,
// because each call first brings zstd's ~5 MB of level-5 tables back into the
// cache that the encoding in between evicted (bench/RESULTS.md, branch wsz).
class CompressingSink final : public RecordSink {
 public:
  using Compress = std::function<void(uint8_t* data, size_t n, ZstdDirective directive)>;
  explicit CompressingSink(Compress compress) : RecordSink(kZstdInputSize), compress_(std::move(compress)) {}
  void Finish() {
    Drain();
    compress_(nullptr, 0, ZstdDirective::kEnd);
  }
  // ZSTD_e_flush over the buffered records: all records given so far become
  // decodable from the output. Nothing given since the last flush: no call
  // (an empty flush would still add bytes CPython's file does not have).
  void Flush() {
    if (length_ == 0 && !unflushed_) return;
    const size_t n = length_;
    length_ = 0;
    unflushed_ = false;
    compress_(buffer_.data(), n, ZstdDirective::kFlush);
  }

 protected:
  void Drain() override {
    if (length_ == 0) return;
    const size_t n = length_;
    length_ = 0;  // a throwing compressor leaves the writer broken, never re-fed
    unflushed_ = true;
    compress_(buffer_.data(), n, ZstdDirective::kContinue);
  }

 private:
  Compress compress_;
  bool unflushed_ = false;  // records fed to zstd since the last kFlush
};

// Counters of CPython's BinaryWriter.get_stats(), in lib/tachyon/write/engines/contract.ts order.
enum Counter : size_t {
  kRepeatRecords,
  kRepeatSamples,
  kFullRecords,
  kSuffixRecords,
  kPopPushRecords,
  kTotalSamples,
  kFramesWritten,
  kFramesSaved,
  kBytesWritten,
  kThreadCount,
  kCounterCount
};

// One tick as lib/tachyon/write/engines/contract.ts TickRecord lays it out, read in place: kTickHeader words
// [tsLo, tsHi, count, frameCount], then per slot (capacity of them) the thread id's low and high halves, then the
// interpreter ids, statuses and stack ends; thread k's stack is ids[ends[k-1] .. ends[k]) (ends[-1] = 0).
struct TickRecord {
  static constexpr size_t kTickHeader = 4;

  // False when `words` is no record of at least `count` slots.
  bool Read(const uint32_t* w, size_t wordCount, const uint32_t* frameIds, size_t frameIdCount) {
    if (wordCount < kTickHeader || (wordCount - kTickHeader) % 5 != 0) return false;
    const size_t capacity = (wordCount - kTickHeader) / 5;
    timestampUs = uint64_t{w[0]} | (uint64_t{w[1]} << 32);
    count = w[2];
    frameCount = w[3];
    threadIdWords = w + kTickHeader;
    interpreterIds = threadIdWords + 2 * capacity;
    statuses = interpreterIds + capacity;
    ends = statuses + capacity;
    ids = frameIds;
    idCount = frameIdCount;
    return count <= capacity;
  }

  uint64_t timestampUs = 0;
  size_t count = 0;
  uint32_t frameCount = 0;
  const uint32_t* threadIdWords = nullptr;
  const uint32_t* interpreterIds = nullptr;
  const uint32_t* statuses = nullptr;
  const uint32_t* ends = nullptr;
  const uint32_t* ids = nullptr;
  size_t idCount = 0;
};

class SampleEncoder {
 public:
  SampleEncoder(RecordSink& sink, uint64_t startTimeUs) : sink_(sink), startTimeUs_(startTimeUs) {}

  // frames innermost first, depth <= 256 (the caller cuts deeper stacks).
  void WriteStack(uint64_t threadId, uint32_t interpreterId, uint64_t timestampUs, uint8_t status,
                  const uint32_t* frames, uint32_t depth);
  // Staged samples from JS: per sample [tidLo, tidHi, interp, tsLo, tsHi, status, depth, frames...]; depth
  // kSameStack (no frames follow) is the thread's previous stack again, which JS found equal to the caller's.
  static constexpr uint32_t kSameStack = 0xffffffffu;
  void WriteBatch(const uint32_t* words, size_t count);
  // One tick of several threads at one timestamp (TickRecord); thread k's stack is cut to its first 256 frames.
  // Every kept frame id must be < frameCount; the whole tick is checked before any of it is encoded.
  void WriteStacks(const TickRecord& tick);
  // Flushes every pending REPEAT run, threads in first-seen order.
  void FlushRepeats();
  // The pending REPEAT runs as the records FlushRepeats would write, without
  // writing them (the recovery journal keeps them at each flush).
  std::vector<uint8_t> PendingRepeats() const;
  const double* counters() const { return counters_; }

 private:
  struct Key {
    uint64_t threadId;
    uint32_t interpreterId;
    bool operator==(const Key& o) const { return threadId == o.threadId && interpreterId == o.interpreterId; }
  };
  struct ThreadState {
    uint8_t prefix[12];              // thread_id u64, interpreter_id u32, host order
    uint32_t stack[kMaxStackDepth];  // previous stack, outermost first
    uint32_t depth = 0;
    uint64_t timestamp = 0;
    uint8_t repeat[kRepeatBufferSize];
    size_t repeatUsed = 0;
    uint32_t repeatCount = 0;
    Key key{0, 0};
    ThreadState* next = nullptr;  // the thread that came after this one last time
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.threadId * 0x9e3779b97f4a7c15ull ^ (uint64_t{k.interpreterId} + 0x632be59bd9b4e019ull);
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };

  ThreadState& Thread(uint64_t threadId, uint32_t interpreterId);
  // The thread's next sample: its delta from the thread's previous timestamp, counted.
  uint64_t NextDelta(ThreadState& t, uint64_t timestampUs);
  // One (delta, status) entry in the thread's REPEAT run: the sample's stack is the previous one.
  void AppendRepeat(ThreadState& t, uint64_t delta, uint8_t status);
  void FlushRepeat(ThreadState& t);
  // One thread's pending run as a REPEAT record at b (kMaxRepeatRecord bytes of room); returns its size.
  static size_t EncodeRepeat(const ThreadState& t, uint8_t* b);

  RecordSink& sink_;
  uint64_t startTimeUs_;
  std::unordered_map<Key, size_t, KeyHash> index_;
  std::vector<std::unique_ptr<ThreadState>> threads_;  // first-seen order
  ThreadState* last_ = nullptr;
  double counters_[kCounterCount] = {};
};

}  // namespace tachyon
}  // namespace profpack
