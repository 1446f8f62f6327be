// N-API glue of the Tachyon reader (lib/tachyon/read/native.ts): file
// handles over ReaderFile, and record decoders writing into JS-owned typed
// arrays, one crossing per window of records.
#include <napi.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "common/error_codes.h"
#include "common/errors.h"
#include "common/module_registry.h"
#include "common/typed_array.h"
#include "platform/file.h"
#include "platform/sigbus_guard.h"
#include "tachyon/read/reader_file.h"
#include "tachyon/read/reader_records.h"

namespace profpack {
namespace {

using tachyon::DecodeOutput;
using tachyon::DecodeStatus;
using tachyon::ReaderFile;
using tachyon::RecordDecoder;

// Result slots shared with lib/tachyon/read/records.ts (Result).
enum ResultSlot { kStatus = 0, kConsumed, kEvents, kTimestamps, kNodes, kReplayed, kErrorOffset, kTrieReset };

ReaderFile* FileOf(const Napi::Value& value) {
  Napi::Env env = value.Env();
  if (!value.IsObject()) throw Napi::TypeError::New(env, "file must be a handle from openFile");
  Napi::Value handle = value.As<Napi::Object>().Get("handle");
  if (!handle.IsExternal()) throw Napi::TypeError::New(env, "file must be a handle from openFile");
  ReaderFile* file = handle.As<Napi::External<ReaderFile>>().Data();
  if (file->closed()) throw MakeProfpackError(env, codes::kTachyonReaderClosed, "the file is closed");
  return file;
}

// What a SIGBUS while reading mapped bytes means: the file shrank under the mapping.
constexpr const char* kShrankMessage = "the file changed while it was read: it is shorter than when it was opened";

// openFile(fd, size, path) -> { size, mapped, handle }: maps a descriptor the JS layer owns.
Napi::Value OpenFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber() || !info[2].IsString())
    throw Napi::TypeError::New(env, "openFile(fd, size, path)");
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const size_t size = IndexArg(info, 1, "size");
  const std::string path = info[2].As<Napi::String>().Utf8Value();
  return Guarded(env, [&]() -> Napi::Value {
    int err = 0;  // a number that is no open file fails to map and read, as EBADF
    auto* file = new ReaderFile(platform::FromNodeFd(fd, err), size, path);
    Napi::Object out = Napi::Object::New(env);
    out.Set("size", Napi::Number::New(env, static_cast<double>(file->size())));
    out.Set("mapped", Napi::Boolean::New(env, file->mapped()));
    out.Set("handle", Napi::External<ReaderFile>::New(env, file, [](Napi::Env, ReaderFile* f) { delete f; }));
    return out;
  });
}

// readRange(file, start, end) -> a copy of the bytes
Napi::Value ReadRange(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ReaderFile* file = FileOf(info[0]);
  const size_t start = IndexArg(info, 1, "start");
  const size_t end = IndexArg(info, 2, "end");
  if (start > end || end > file->size()) throw Napi::RangeError::New(env, "range outside the file");
  auto buffer = Napi::Buffer<uint8_t>::New(env, end - start);
  const uint8_t* from = file->data() + start;
  if (!CatchingSigbus([&] { std::memcpy(buffer.Data(), from, end - start); })) {
    throw MakeProfpackError(env, codes::kTachyonFileChanged, kShrankMessage, static_cast<int64_t>(start));
  }
  return buffer;
}

// edgeHash(fd, size, head, tail) -> bigint | null: FNV-1a 64 of bytes [0, head) and [size - tail, size) (each cut to
// the file, never overlapping), preads only; null when they cannot all be read. The change check of
// lib/input.ts (watchInput); lib/input.ts's edgeHash is its JS twin and must give the same value.
Napi::Value EdgeHash(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "edgeHash(fd, size, head, tail)");
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const size_t size = IndexArg(info, 1, "size");
  const size_t head = std::min(IndexArg(info, 2, "head"), size);
  const size_t tailStart = size - std::min(IndexArg(info, 3, "tail"), size - head);
  uint8_t bytes[512];
  if (head > sizeof bytes / 2 || size - tailStart > sizeof bytes / 2)
    throw Napi::RangeError::New(env, "edges too long");
  int err = 0;
  const platform::Descriptor d = platform::FromNodeFd(fd, err);
  size_t have = 0;
  auto read = [&](size_t at, size_t length) {
    while (length > 0) {
      const int64_t n = platform::ReadAt(d, bytes + have, length, at, err);
      if (n <= 0) return false;
      have += static_cast<size_t>(n), at += static_cast<size_t>(n), length -= static_cast<size_t>(n);
    }
    return true;
  };
  if (err != 0 || !read(0, head) || !read(tailStart, size - tailStart)) return env.Null();
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < have; i++) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return Napi::BigInt::New(env, hash);
}

Napi::Value CloseFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info[0].IsObject()) {
    Napi::Value handle = info[0].As<Napi::Object>().Get("handle");
    if (handle.IsExternal()) handle.As<Napi::External<ReaderFile>>().Data()->Close();
  }
  return env.Undefined();
}

// A decoder and the JS buffers it writes into (referenced so they outlive it).
struct DecoderBox {
  std::unique_ptr<RecordDecoder> decoder;
  Napi::ObjectReference events, timestamps, nodes, result;
  DecodeOutput out;
  double* resultData = nullptr;
};

DecoderBox* DecoderOf(const Napi::Value& value) {
  if (!value.IsExternal()) throw Napi::TypeError::New(value.Env(), "decoder must come from createDecoder");
  DecoderBox* box = value.As<Napi::External<DecoderBox>>().Data();
  if (!box->decoder) throw MakeProfpackError(value.Env(), codes::kTachyonReaderClosed, "the decoder was released");
  return box;
}

// releaseDecoder(decoder): frees the decoder's trie and thread tables now, not
// when a finalizer runs on a later turn (a synchronous open/replay/close loop
// would otherwise grow without bound).
Napi::Value ReleaseDecoder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info[0].IsExternal()) {
    DecoderBox* box = info[0].As<Napi::External<DecoderBox>>().Data();
    box->decoder.reset();
    box->events.Reset();
    box->timestamps.Reset();
    box->nodes.Reset();
    box->result.Reset();
  }
  return env.Undefined();
}

// createDecoder(littleEndian, startTimeUs, threadCount, totalSize, events, timestamps, nodes, result, maxNodes)
Napi::Value CreateDecoder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const bool littleEndian = info[0].ToBoolean().Value();
  if (!info[1].IsBigInt()) throw Napi::TypeError::New(env, "startTimeUs must be a bigint");
  bool lossless = true;
  const uint64_t startTimeUs = info[1].As<Napi::BigInt>().Uint64Value(&lossless);
  const double threadCount = info[2].As<Napi::Number>().DoubleValue();
  const size_t totalSize = IndexArg(info, 3, "totalSize");
  const RawView events = ViewOfType(info[4], napi_uint32_array, "events");
  const RawView timestamps = ViewOfType(info[5], napi_biguint64_array, "timestamps");
  const RawView nodes = ViewOfType(info[6], napi_uint32_array, "nodes");
  const RawView result = ViewOfType(info[7], napi_float64_array, "result");
  if (result.length < 8) throw Napi::RangeError::New(env, "result needs 8 slots");
  const size_t maxNodes = IndexArg(info, 8, "maxNodes");
  auto* box = new DecoderBox();
  box->decoder = std::make_unique<RecordDecoder>(littleEndian, startTimeUs, static_cast<uint32_t>(threadCount),
                                                 totalSize, maxNodes);
  box->events = Napi::Persistent(info[4].As<Napi::Object>());
  box->timestamps = Napi::Persistent(info[5].As<Napi::Object>());
  box->nodes = Napi::Persistent(info[6].As<Napi::Object>());
  box->result = Napi::Persistent(info[7].As<Napi::Object>());
  box->out.events = reinterpret_cast<uint32_t*>(events.data);
  box->out.eventCapacity = events.length / tachyon::kEventStride;
  box->out.timestamps = reinterpret_cast<uint64_t*>(timestamps.data);
  box->out.timestampCapacity = timestamps.length;
  box->out.nodes = reinterpret_cast<uint32_t*>(nodes.data);
  box->out.nodeCapacity = nodes.length / 2;
  box->resultData = reinterpret_cast<double*>(result.data);
  return Napi::External<DecoderBox>::New(env, box, [](Napi::Env, DecoderBox* b) { delete b; });
}

Napi::Value Finish(Napi::Env env, DecoderBox* box, DecodeStatus status) {
  double* r = box->resultData;
  r[kStatus] = static_cast<double>(status);
  r[kConsumed] = static_cast<double>(box->out.consumed);
  r[kEvents] = static_cast<double>(box->out.eventCount);
  r[kTimestamps] = static_cast<double>(box->out.timestampCount);
  r[kNodes] = static_cast<double>(box->out.nodeCount);
  r[kReplayed] = static_cast<double>(box->decoder->replayed());
  r[kTrieReset] = box->decoder->trieReset() ? 1 : 0;
  if (status != DecodeStatus::kError) {
    r[kErrorOffset] = -1;
    return env.Null();
  }
  const auto& f = box->decoder->failure();
  r[kErrorOffset] = static_cast<double>(f.offset);
  Napi::Object err = Napi::Object::New(env);
  err.Set("code", Napi::String::New(env, f.code));
  err.Set("message", Napi::String::New(env, f.message));
  err.Set("offset", Napi::Number::New(env, static_cast<double>(f.offset)));
  return err;
}

// decodeBytes(decoder, window, windowStart, length, final) -> error | null
Napi::Value DecodeBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DecoderBox* box = DecoderOf(info[0]);
  const RawView window = ViewOfType(info[1], napi_uint8_array, "window");
  const size_t windowStart = IndexArg(info, 2, "windowStart");
  const size_t length = IndexArg(info, 3, "length");
  const bool final = info[4].ToBoolean().Value();
  if (length > window.length) throw Napi::RangeError::New(env, "length is past the end of the window");
  const DecodeStatus status = box->decoder->Decode(window.data, windowStart, length, final, box->out);
  return Finish(env, box, status);
}

// decodeFile(decoder, file, fileOffset, windowStart, length, final) -> error | null
Napi::Value DecodeFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DecoderBox* box = DecoderOf(info[0]);
  ReaderFile* file = FileOf(info[1]);
  const size_t fileOffset = IndexArg(info, 2, "fileOffset");
  const size_t windowStart = IndexArg(info, 3, "windowStart");
  const size_t length = IndexArg(info, 4, "length");
  const bool final = info[5].ToBoolean().Value();
  if (fileOffset > file->size() || length > file->size() - fileOffset) {
    throw Napi::RangeError::New(env, "window outside the file");
  }
  DecodeStatus status = DecodeStatus::kError;
  const uint8_t* window = file->data() + fileOffset;
  if (!CatchingSigbus([&] { status = box->decoder->Decode(window, windowStart, length, final, box->out); })) {
    // The decoder stopped mid-record: its state is void, and so is what this call wrote.
    box->decoder.reset();
    double* r = box->resultData;
    r[kStatus] = static_cast<double>(DecodeStatus::kError);
    r[kConsumed] = r[kEvents] = r[kTimestamps] = r[kNodes] = r[kTrieReset] = 0;
    r[kErrorOffset] = static_cast<double>(windowStart);
    Napi::Object err = Napi::Object::New(env);
    err.Set("code", Napi::String::New(env, codes::kTachyonFileChanged));
    err.Set("message", Napi::String::New(env, kShrankMessage));
    err.Set("offset", Napi::Number::New(env, static_cast<double>(windowStart)));
    return err;
  }
  // Decoded bytes are not read again by this replay: a large file's pages go as it advances.
  file->ReleaseBefore(fileOffset + box->out.consumed);
  return Finish(env, box, status);
}

Napi::Value DecoderStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DecoderBox* box = DecoderOf(info[0]);
  const auto& s = box->decoder->stats();
  return CountersOut(env, {static_cast<double>(s.repeatRecords), static_cast<double>(s.repeatSamples),
                           static_cast<double>(s.fullRecords), static_cast<double>(s.suffixRecords),
                           static_cast<double>(s.popPushRecords), static_cast<double>(s.totalSamples),
                           static_cast<double>(s.stackReconstructions)});
}

PROFPACK_REGISTER_MODULE("tachyonReader", {{"openFile", OpenFile},
                                           {"readRange", ReadRange},
                                           {"edgeHash", EdgeHash},
                                           {"closeFile", CloseFile},
                                           {"createDecoder", CreateDecoder},
                                           {"decodeBytes", DecodeBytes},
                                           {"decodeFile", DecodeFile},
                                           {"releaseDecoder", ReleaseDecoder},
                                           {"decoderStats", DecoderStats}});

}  // namespace
}  // namespace profpack
