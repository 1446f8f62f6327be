// V8's sampling heap profiler through V8's own C++ API, without the forced GC
// that the inspector's HeapProfiler.startSampling always asks for
// (kSamplingForceGC): a poll here walks the allocation tree and copies the live
// samples, and dead objects leave the profile at V8's own next GC.
//
// V8's API is not ABI-stable, so this addon is built per Node major, apart from
// the N-API addon (binding.gyp's profpack_heap target; scripts/native-sources.js
// leaves native/heap/ out). lib/record/heap/probe.ts loads it when it matches.
//
// A poll comes back as flat typed arrays and a string table, so that the JS side
// converts only the allocation nodes it has not met before:
//   nodes, pre-order (a parent before its children): nodeIds, parentIds
//   (kNoParent for the root), nameIds and urlIds (into strings), scriptIds,
//   lines and columns (0-based, -1 unknown, as the inspector gives them);
//   samples: ordinals (V8's sample_id, the inspector's ordinal), sizes
//   (V8's raw sizes; the inspector's are size x count, undone in sampler.ts), sampleNodes.
#include <node.h>
#include <v8-profiler.h>
#include <v8.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

namespace profpack_heap {

namespace {

constexpr uint32_t kNoParent = 0xffffffffu;
// V8's own cap on a sampled stack (kMaxFramesCount's order); the inspector asks for 128 too.
constexpr int kStackDepth = 128;
constexpr int kNodeColumns = 7;
constexpr int kSampleColumns = 3;

// Distinct strings of one poll, by content: V8's string hash picks a bucket, equality decides.
class StringTable {
 public:
  explicit StringTable(v8::Isolate* isolate) : isolate_(isolate) {}

  uint32_t Id(v8::Local<v8::String> s) {
    if (s.IsEmpty()) s = v8::String::Empty(isolate_);
    std::vector<uint32_t>& bucket = byHash_[s->GetIdentityHash()];
    for (uint32_t id : bucket) {
      if (strings_[id]->StringEquals(s)) return id;
    }
    auto id = static_cast<uint32_t>(strings_.size());
    strings_.push_back(s);
    bucket.push_back(id);
    return id;
  }

  v8::Local<v8::Array> ToArray() {
    return v8::Array::New(isolate_, reinterpret_cast<v8::Local<v8::Value>*>(strings_.data()), strings_.size());
  }

 private:
  v8::Isolate* isolate_;
  std::vector<v8::Local<v8::String>> strings_;
  std::unordered_map<int, std::vector<uint32_t>> byHash_;
};

// One ArrayBuffer cut into `columns` views of `count` 32-bit values each (column-major).
class Columns {
 public:
  Columns(v8::Isolate* isolate, size_t count, int columns) : count_(count) {
    size_t bytes = count * columns * sizeof(uint32_t);
    buffer_ = v8::ArrayBuffer::New(isolate, bytes == 0 ? 1 : bytes);
    data_ = static_cast<uint32_t*>(buffer_->GetBackingStore()->Data());
  }

  uint32_t* Column(int c) { return data_ + c * count_; }

  void SetUint32(v8::Isolate* isolate, v8::Local<v8::Object> out, const char* name, int c) {
    auto view = v8::Uint32Array::New(buffer_, c * count_ * sizeof(uint32_t), count_);
    out->Set(isolate->GetCurrentContext(), Name(isolate, name), view).Check();
  }

  void SetInt32(v8::Isolate* isolate, v8::Local<v8::Object> out, const char* name, int c) {
    auto view = v8::Int32Array::New(buffer_, c * count_ * sizeof(uint32_t), count_);
    out->Set(isolate->GetCurrentContext(), Name(isolate, name), view).Check();
  }

  static v8::Local<v8::String> Name(v8::Isolate* isolate, const char* name) {
    return v8::String::NewFromUtf8(isolate, name, v8::NewStringType::kInternalized).ToLocalChecked();
  }

 private:
  size_t count_;
  v8::Local<v8::ArrayBuffer> buffer_;
  uint32_t* data_;
};

size_t CountNodes(const v8::AllocationProfile::Node* root) {
  size_t count = 0;
  std::vector<const v8::AllocationProfile::Node*> pending{root};
  while (!pending.empty()) {
    const v8::AllocationProfile::Node* node = pending.back();
    pending.pop_back();
    count++;
    for (const v8::AllocationProfile::Node* child : node->children) pending.push_back(child);
  }
  return count;
}

void Start(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  double interval = info.Length() > 0 && info[0]->IsNumber() ? info[0].As<v8::Number>()->Value() : 0;
  if (!(interval >= 1 && interval <= 4294967295.0)) {
    isolate->ThrowException(v8::Exception::RangeError(Columns::Name(isolate, "start(intervalBytes): bad interval")));
    return;
  }
  bool started = isolate->GetHeapProfiler()->StartSamplingHeapProfiler(static_cast<uint64_t>(interval), kStackDepth,
                                                                       v8::HeapProfiler::kSamplingNoFlags);
  info.GetReturnValue().Set(started);
}

void Stop(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetIsolate()->GetHeapProfiler()->StopSamplingHeapProfiler();
}

void Poll(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::HandleScope scope(isolate);
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  std::unique_ptr<v8::AllocationProfile> profile(isolate->GetHeapProfiler()->GetAllocationProfile());
  if (!profile) return;  // not sampling: undefined
  const v8::AllocationProfile::Node* root = profile->GetRootNode();

  StringTable strings(isolate);
  Columns nodes(isolate, CountNodes(root), kNodeColumns);
  uint32_t* ids = nodes.Column(0);
  uint32_t* parents = nodes.Column(1);
  uint32_t* names = nodes.Column(2);
  uint32_t* urls = nodes.Column(3);
  uint32_t* scripts = nodes.Column(4);
  uint32_t* lines = nodes.Column(5);
  uint32_t* columns = nodes.Column(6);
  std::vector<std::pair<const v8::AllocationProfile::Node*, uint32_t>> pending{{root, kNoParent}};
  size_t at = 0;
  while (!pending.empty()) {
    auto [node, parent] = pending.back();
    pending.pop_back();
    ids[at] = node->node_id;
    parents[at] = parent;
    names[at] = strings.Id(node->name);
    urls[at] = strings.Id(node->script_name);
    scripts[at] = static_cast<uint32_t>(node->script_id);
    lines[at] = static_cast<uint32_t>(node->line_number - 1);
    columns[at] = static_cast<uint32_t>(node->column_number - 1);
    at++;
    for (auto it = node->children.rbegin(); it != node->children.rend(); ++it) pending.emplace_back(*it, node->node_id);
  }

  const std::vector<v8::AllocationProfile::Sample>& list = profile->GetSamples();
  Columns samples(isolate, list.size(), kSampleColumns);
  uint32_t* ordinals = samples.Column(0);
  uint32_t* sizes = samples.Column(1);
  uint32_t* sampleNodes = samples.Column(2);
  for (size_t i = 0; i < list.size(); i++) {
    const v8::AllocationProfile::Sample& s = list[i];
    ordinals[i] = static_cast<uint32_t>(s.sample_id);
    // The raw size: the reader scales each sample by 1/p once (unsampledWeight); size x count is already scaled.
    sizes[i] = s.size > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(s.size);
    sampleNodes[i] = s.node_id;
  }

  v8::Local<v8::Object> out = v8::Object::New(isolate);
  nodes.SetUint32(isolate, out, "nodeIds", 0);
  nodes.SetUint32(isolate, out, "parentIds", 1);
  nodes.SetUint32(isolate, out, "nameIds", 2);
  nodes.SetUint32(isolate, out, "urlIds", 3);
  nodes.SetInt32(isolate, out, "scriptIds", 4);
  nodes.SetInt32(isolate, out, "lines", 5);
  nodes.SetInt32(isolate, out, "columns", 6);
  out->Set(ctx, Columns::Name(isolate, "strings"), strings.ToArray()).Check();
  samples.SetUint32(isolate, out, "ordinals", 0);
  samples.SetUint32(isolate, out, "sizes", 1);
  samples.SetUint32(isolate, out, "sampleNodes", 2);
  info.GetReturnValue().Set(out);
}

}  // namespace

}  // namespace profpack_heap

// Context-aware: each worker thread (its own isolate) may load it and sample its own heap.
NODE_MODULE_INIT(/* exports, module, context */) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();  // Context::GetIsolate is gone in Node 26's V8
  auto set = [&](const char* name, v8::FunctionCallback fn) {
    v8::Local<v8::Function> f = v8::Function::New(context, fn).ToLocalChecked();
    exports->Set(context, profpack_heap::Columns::Name(isolate, name), f).Check();
  };
  set("start", profpack_heap::Start);
  set("poll", profpack_heap::Poll);
  set("stop", profpack_heap::Stop);
  exports
      ->Set(context, profpack_heap::Columns::Name(isolate, "nodeMajor"), v8::Integer::New(isolate, NODE_MAJOR_VERSION))
      .Check();
}
