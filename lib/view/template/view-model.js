/*
 * profpack view model: the page's re-aggregation of a time window, with no
 * DOM. The same file runs in the flame page (inlined, as `profpackView`) and
 * under Node (`require`), so the unit tests check the very code the page runs
 * against `aggregate()`. Input: the ViewData that lib/view/tree.ts builds.
 */
(function (root, factory) {
  if (typeof module === 'object' && module.exports) module.exports = factory();
  else root.profpackView = factory();
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';
  // Entry keys are node * CLASSES + status class (lib/view/tree.ts STATUS_CLASSES).
  var CLASSES = 3;
  var ALL_CLASSES = 7;

  /** Node → its thread node (depth 1), cached on the data object. */
  function threadOf(data) {
    if (data._threadOf) return data._threadOf;
    var n = data.parent.length;
    var out = new Int32Array(n);
    out[0] = -1;
    for (var v = 1; v < n; v++) out[v] = data.parent[v] === 0 ? v : out[data.parent[v]];
    data._threadOf = out;
    return out;
  }

  /** The node of thread `key`, or -1. */
  function threadNode(data, key) {
    for (var v = 1; v < data.parent.length; v++) {
      if (data.parent[v] === 0 && data.funcs[data.func[v]].thread === key) return v;
    }
    return -1;
  }

  /**
   * Samples of buckets [b0, b1), of one thread (`thread` key, or null for all)
   * and of the status classes in `classMask` (bit 0 on-CPU, 1 GC, 2 idle):
   * per-node self and total counts. A heap page's entries are allocations:
   * only those still live at the window's end (freed in bucket b1 or later) count.
   */
  function selectRange(data, b0, b1, thread, classMask) {
    var mask = classMask === undefined ? ALL_CLASSES : classMask;
    var n = data.parent.length;
    var self = new Float64Array(n);
    var only = thread == null ? -1 : threadNode(data, thread);
    var owner = threadOf(data);
    var lo = Math.max(0, Math.min(b0, data.bucketCount));
    var hi = Math.max(lo, Math.min(b1, data.bucketCount));
    var end = data.entryOffsets[hi];
    var freed = data.heap ? data.heap.entryFree : null;
    for (var i = data.entryOffsets[lo]; i < end; i++) {
      if (freed !== null && freed[i] < hi) continue;
      var key = data.entryKey[i];
      var node = Math.floor(key / CLASSES);
      if ((mask & (1 << (key - node * CLASSES))) === 0) continue;
      if (only >= 0 && owner[node] !== only) continue;
      self[node] += data.entryCount[i];
    }
    var total = Float64Array.from(self);
    for (var v = n - 1; v > 0; v--) total[data.parent[v]] += total[v];
    return { self: self, total: total, samples: total[0], thread: thread == null ? null : thread, b0: lo, b1: hi };
  }

  /**
   * Per-function self and total of a selection, as `aggregate()` counts them:
   * total counts a sample once however often recursion repeats the function.
   */
  function functionRows(data, sel) {
    var self = new Float64Array(data.funcs.length);
    var total = new Float64Array(data.funcs.length);
    // A thread node's own value is its records with an empty stack: one (no stack) row, as top shows them.
    var noStack = 0;
    for (var v = 1; v < data.parent.length; v++) {
      if (sel.total[v] === 0) continue;
      var f = data.func[v];
      if (data.funcs[f].thread !== undefined) {
        noStack += sel.self[v];
        continue;
      }
      self[f] += sel.self[v];
      if (data.recursive[v] === 0) total[f] += sel.total[v];
    }
    var rows = [];
    for (var k = 0; k < data.funcs.length; k++) {
      if (total[k] > 0)
        rows.push({
          func: k,
          name: data.funcs[k].name,
          file: data.funcs[k].file,
          line: data.funcs[k].line,
          hot: data.funcs[k].hot,
          self: self[k],
          total: total[k],
        });
    }
    if (noStack !== 0) rows.push({ func: -1, name: '(no stack)', file: '', line: null, self: noStack, total: noStack });
    rows.sort(function (a, b) {
      return b.self - a.self || b.total - a.total || a.func - b.func;
    });
    return rows;
  }

  function childrenOf(data) {
    if (data._children) return data._children;
    var kids = [];
    for (var v = 0; v < data.parent.length; v++) kids.push([]);
    for (var w = 1; w < data.parent.length; w++) kids[data.parent[w]].push(w);
    data._children = kids;
    return kids;
  }

  /** The flame graph's root node for a selection: the thread, the only thread, or all. */
  function flameRoot(data, sel) {
    if (sel.thread != null) return threadNode(data, sel.thread);
    var threads = childrenOf(data)[0];
    return threads.length === 1 ? threads[0] : 0;
  }

  /** d3-flame-graph's input: { name, value (total), self, func, children } for the nodes with samples. */
  function flameTree(data, sel) {
    var kids = childrenOf(data);
    function build(v) {
      var f = data.funcs[data.func[v]];
      var out = { name: f.name, value: sel.total[v], self: sel.self[v], func: data.func[v], node: v };
      var cs = kids[v];
      var list = [];
      for (var i = 0; i < cs.length; i++) if (sel.total[cs[i]] > 0) list.push(build(cs[i]));
      if (list.length > 0) out.children = list;
      return out;
    }
    var root = flameRoot(data, sel);
    var tree = build(root);
    if (root !== 0 && data.funcs[data.func[root]].thread !== undefined) tree.name = 'all (' + tree.name + ')';
    return tree;
  }

  /** Per bucket and thread: samples of each status class (the timeline's bars). */
  function timeline(data) {
    var owner = threadOf(data);
    var lanes = {};
    for (var b = 0; b < data.bucketCount; b++) {
      for (var i = data.entryOffsets[b]; i < data.entryOffsets[b + 1]; i++) {
        var key = data.entryKey[i];
        var node = Math.floor(key / CLASSES);
        var t = data.funcs[data.func[owner[node]]].thread;
        var lane = lanes[t] || (lanes[t] = new Float64Array(data.bucketCount * CLASSES));
        lane[b * CLASSES + (key - node * CLASSES)] += data.entryCount[i];
      }
    }
    return lanes;
  }

  /** Start of bucket b in ms after the profile's start time (what `top --from/--to` take). */
  function bucketMs(data, b) {
    return (data.originUs + b * data.bucketUs) / 1000;
  }

  return {
    CLASSES: CLASSES,
    selectRange: selectRange,
    functionRows: functionRows,
    flameTree: flameTree,
    timeline: timeline,
    bucketMs: bucketMs,
    threadNode: threadNode,
  };
});
