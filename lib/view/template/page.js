/*
 * The flame page's behaviour: the timeline (per-thread status bars and a
 * brush), the thread and status pickers, the flame graph (d3-flame-graph),
 * search, the icicle toggle and the function table. Everything is computed
 * from the embedded ViewData through profpackView (view-model.js); a diff
 * page carries a finished tree instead of buckets.
 */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('profpack-data').textContent);
  var view = window.profpackView;
  var $ = function (id) {
    return document.getElementById(id);
  };
  var pct = function (n, of) {
    return of > 0 ? ((100 * n) / of).toFixed(1) + '%' : '0.0%';
  };
  // Values in the unit of the page's sample type, by the CLI's own formatter (lib/profile/units.ts
  // formatValue, injected by lib/view/html.ts as profpackFormat); "samples" is said only of counts.
  var unit = data.sampleType ? data.sampleType.unit : data.unit || 'count';
  var fmt = function (v) {
    return window.profpackFormat(v, unit);
  };
  // One label per thread, the picker's and the timeline lane's: its id and, where the profile names it, its name.
  var threadLabel = function (t) {
    return 'thread ' + t.key + (t.name ? ' ' + t.name : '');
  };
  var what = function (v) {
    return unit === 'count' && data.sampleType && /^samples?$/.test(data.sampleType.type)
      ? v + ' samples'
      : fmt(v) + (data.sampleType ? ' of ' + data.sampleType.type : '');
  };
  var STATUS = [
    { name: 'on-CPU', color: '#e8743b' },
    { name: 'GC', color: '#8e44ad' },
    { name: 'idle', color: '#b8c2cc' },
  ];
  var page = (window.profpackPage = { data: data, ready: false });

  var chartWidth = Math.max(640, $('chart').clientWidth || 960);
  var chart = flamegraph
    .default()
    .width(chartWidth)
    .cellHeight(18)
    .transitionDuration(250)
    .minFrameSize(1)
    .sort(true)
    // Icicle first: the root and the widest frames are the top rows whatever the depth (a flame
    // graph puts the root at the bottom, thousands of pixels down on a deep profile such as tsc's).
    .inverted(true)
    .setDetailsElement($('details'));
  page.chart = chart;

  // Plain substring search (the library's default builds a RegExp from the text).
  chart.setSearchMatch(function (d, term) {
    if (!term) return false;
    var f = funcOf(d);
    var t = term.toLowerCase();
    return f.name.toLowerCase().indexOf(t) >= 0 || (f.file || '').toLowerCase().indexOf(t) >= 0;
  });
  chart.setSearchHandler(function (results, sum, total) {
    $('search-result').textContent = $('search').value
      ? 'matched ' + fmt(sum) + ' of ' + what(total) + ' (' + pct(sum, total) + ')'
      : '';
    $('search-result').dataset.samples = String(sum);
  });

  // A flame page's nodes name their function by id; a diff page's carry name, file and line.
  function funcOf(d) {
    return d.data.file !== undefined ? d.data : data.funcs[d.data.func];
  }

  function where(d) {
    var f = funcOf(d);
    return frameInfo(f.file, f.line);
  }

  function frameInfo(file, line) {
    if (!file) return '';
    return file + (line != null ? ':' + line : '');
  }

  if (data.kind === 'diff') initDiff();
  else initFlame();

  $('search').addEventListener('input', function () {
    var term = $('search').value;
    if (term) chart.search(term);
    else chart.clear();
    $('search-result').textContent = term ? $('search-result').textContent : '';
  });
  $('icicle').addEventListener('click', function () {
    chart.inverted(!chart.inverted());
    $('icicle').textContent = chart.inverted() ? 'flame' : 'icicle';
    $('chart').dataset.inverted = String(chart.inverted());
    chart.update();
  });
  $('reset-zoom').addEventListener('click', function () {
    chart.resetZoom();
  });

  function initFlame() {
    var rootTotal = 0;
    chart.setLabelHandler(function (d) {
      return (
        d.data.name +
        (where(d) ? '  ' + where(d) : '') +
        '  ·  total ' +
        fmt(d.data.value) +
        ' (' +
        pct(d.data.value, rootTotal) +
        ')  ·  self ' +
        fmt(d.data.self) +
        ' (' +
        pct(d.data.self, rootTotal) +
        ')'
      );
    });
    var heap = data.heap || null;
    var state = { b0: 0, b1: data.bucketCount, thread: null, mask: 7 };
    if (heap) {
      state.b0 = heap.initial.b0;
      state.b1 = heap.initial.b1;
    }
    page.state = state;

    var select = $('thread');
    data.threads
      .slice()
      .sort(function (a, b) {
        return b.samples - a.samples;
      })
      .forEach(function (t) {
        var o = document.createElement('option');
        o.value = t.key;
        o.textContent = threadLabel(t) + ' (' + what(t.samples) + ')';
        select.appendChild(o);
      });
    select.addEventListener('change', function () {
      state.thread = select.value === '' ? null : select.value;
      render();
    });
    [0, 1, 2].forEach(function (c) {
      var box = $('status-' + c);
      box.addEventListener('change', function () {
        state.mask = box.checked ? state.mask | (1 << c) : state.mask & ~(1 << c);
        render();
      });
    });

    if (heap) drawHeapTimeline(state);
    else drawTimeline(state);
    var first = true;

    function render() {
      var sel = view.selectRange(data, state.b0, state.b1, state.thread, state.mask);
      rootTotal = sel.samples;
      var tree = view.flameTree(data, sel);
      if (first) {
        d3.select('#chart').datum(tree).call(chart);
        first = false;
      } else {
        chart.update(tree);
      }
      var from = view.bucketMs(data, sel.b0);
      var to = view.bucketMs(data, sel.b1);
      var w = $('window');
      w.dataset.fromMs = String(from);
      w.dataset.toMs = String(to);
      w.dataset.samples = String(sel.samples);
      var span = from + ' – ' + to + ' ms after the start' + (state.thread ? ', thread ' + state.thread : '');
      w.textContent = heap
        ? 'allocations made ' + span + ', still live at ' + to + ' ms: ' + fmt(sel.samples)
        : 'window ' + span + ': ' + what(sel.samples);
      fillTable(view.functionRows(data, sel), sel.samples);
      if ($('search').value) chart.search($('search').value);
    }
    page.render = render;
    render();
  }

  /**
   * A heap page's timeline: the live bytes (estimated) per bucket, one lane. A
   * dragged window selects the allocations made in it still live at its end;
   * the buttons select everything live at the peak or at the end.
   */
  function drawHeapTimeline(state) {
    var heap = data.heap;
    document.querySelectorAll('.status').forEach(function (el) {
      el.style.display = 'none';
    });
    var hint = document.querySelector('#timeline-box .hint');
    if (hint) hint.textContent = 'drag a window: the allocations made in it that are still live at its end';
    var controls = document.querySelector('#timeline-box .controls');
    var moments = [
      ['live at the peak', 0, heap.peakBucket + 1, 'at-peak'],
      ['live at the end', 0, data.bucketCount, 'at-end'],
    ];
    moments.forEach(function (b) {
      var button = document.createElement('button');
      button.type = 'button';
      button.id = b[3];
      button.textContent = b[0];
      button.addEventListener('click', function () {
        state.b0 = b[1];
        state.b1 = b[2];
        moveBrush();
        page.render();
      });
      controls.appendChild(button);
    });
    var labelW = 150;
    var W = chartWidth;
    var plotW = W - labelW;
    var laneH = 120;
    var svg = d3
      .select('#timeline')
      .attr('width', W)
      .attr('height', laneH + 20);
    var n = Math.max(1, data.bucketCount);
    var bw = plotW / n;
    var peak = 1;
    var external = heap.externalBytes;
    for (var b = 0; b < data.bucketCount; b++) {
      peak = Math.max(peak, heap.liveBytes[b]);
      // One byte scale for both: the external line and the sampled bars compare at a glance.
      if (external && external[b] !== null) peak = Math.max(peak, external[b]);
    }
    svg.append('text').attr('x', 4).attr('y', 14).attr('class', 'lane-label').text('live (sampled, scaled)');
    // The peak is the poll with the most sampled bytes (as `--at peak`); scaled, another bar may stand taller.
    svg
      .append('text')
      .attr('x', 4)
      .attr('y', 30)
      .attr('class', 'lane-label')
      .text('peak ' + fmt(heap.liveBytes[heap.peakBucket]));
    var g = svg.append('g').attr('transform', 'translate(' + labelW + ',0)');
    for (var k = 0; k < data.bucketCount; k++) {
      var h = ((laneH - 4) * heap.liveBytes[k]) / peak;
      g.append('rect')
        .attr('class', 'live')
        .attr('x', k * bw)
        .attr('y', laneH - 2 - h)
        .attr('width', Math.max(bw - 0.5, 0.5))
        .attr('height', h)
        .attr('fill', k === heap.peakBucket ? '#c0392b' : '#5b8def');
    }
    if (external) drawExternalLine(svg, g, external, peak, laneH, bw);
    var timeBrush = timeAxisAndBrush(svg, state, labelW, plotW, laneH, bw);
    function moveBrush() {
      timeBrush.group.call(
        timeBrush.brush.move,
        state.b0 === 0 && state.b1 === data.bucketCount ? null : [state.b0 * bw, state.b1 * bw],
      );
    }
    moveBrush();
  }

  /**
   * External memory (Buffer and ArrayBuffer backing stores, outside V8's sampled heap) as a line over the bars, each
   * bucket's value at its middle; its end value in the label.
   */
  function drawExternalLine(svg, g, external, peak, laneH, bw) {
    var points = [];
    var end = null;
    for (var k = 0; k < external.length; k++) {
      if (external[k] === null) continue;
      points.push([k * bw + bw / 2, laneH - 2 - ((laneH - 4) * external[k]) / peak]);
      end = external[k];
    }
    if (points.length === 0) return;
    g.append('path')
      .attr('class', 'external')
      .attr('d', d3.line()(points))
      .attr('fill', 'none')
      .attr('stroke', '#e67e22')
      .attr('stroke-width', 2);
    svg
      .append('text')
      .attr('x', 4)
      .attr('y', 46)
      .attr('class', 'lane-label external-label')
      .attr('fill', '#e67e22')
      .text('external ' + fmt(end) + ' (Buffers…)');
  }

  /** A function table's cell; the numeric ones are right-aligned. */
  function appendCell(tr, cell, numeric) {
    var td = document.createElement('td');
    td.textContent = String(cell);
    if (numeric) td.className = 'num';
    tr.appendChild(td);
  }

  function fillTable(rows, samples) {
    var body = $('functions').querySelector('tbody');
    body.textContent = '';
    rows.slice(0, 40).forEach(function (r) {
      var tr = document.createElement('tr');
      tr.dataset.name = r.name;
      tr.dataset.file = r.file;
      tr.dataset.self = String(r.self);
      tr.dataset.total = String(r.total);
      // The hot line (`top --by line`'s), else the function's first line.
      var line = r.hot != null ? r.hot : r.line;
      if (line != null) tr.dataset.line = String(line);
      [fmt(r.self), pct(r.self, samples), fmt(r.total), pct(r.total, samples), r.name, frameInfo(r.file, line)].forEach(
        function (cell, i) {
          appendCell(tr, cell, i < 4);
        },
      );
      body.appendChild(tr);
    });
  }

  /** Shortens an SVG text to `width` px with an ellipsis, never cutting into its first `keep` characters (the id). */
  function fitText(node, width, keep) {
    var full = node.textContent;
    for (var n = full.length; n > keep + 1 && node.getComputedTextLength() > width; n--)
      node.textContent = full.slice(0, n - 1) + '\u2026';
  }

  function drawTimeline(state) {
    var lanes = view.timeline(data);
    var shown = data.threads
      .slice()
      .sort(function (a, b) {
        return b.samples - a.samples;
      })
      .slice(0, 16);
    var laneH = Math.max(22, Math.min(56, Math.floor(160 / Math.max(1, shown.length))));
    var labelW = 180;
    var W = chartWidth;
    var plotW = W - labelW;
    var H = shown.length * laneH + 20;
    var svg = d3.select('#timeline').attr('width', W).attr('height', H);
    var n = Math.max(1, data.bucketCount);
    var bw = plotW / n;
    shown.forEach(function (thread, li) {
      var lane = lanes[thread.key];
      var peak = 1;
      for (var b = 0; b < data.bucketCount; b++) peak = Math.max(peak, lane[b * 3] + lane[b * 3 + 1] + lane[b * 3 + 2]);
      var g = svg.append('g').attr('transform', 'translate(' + labelW + ',' + li * laneH + ')');
      var label = svg
        .append('text')
        .attr('x', 4)
        .attr('y', li * laneH + laneH / 2 + 4)
        .attr('class', 'lane-label')
        .text(threadLabel(thread));
      fitText(label.node(), labelW - 8, threadLabel({ key: thread.key }).length);
      label.append('title').text(threadLabel(thread));
      for (var b2 = 0; b2 < data.bucketCount; b2++) {
        var y = laneH - 2;
        for (var c = 0; c < 3; c++) {
          var v = lane[b2 * 3 + c];
          if (v === 0) continue;
          var h = ((laneH - 4) * v) / peak;
          y -= h;
          g.append('rect')
            .attr('x', b2 * bw)
            .attr('y', y)
            .attr('width', Math.max(bw - 0.5, 0.5))
            .attr('height', h)
            .attr('fill', STATUS[c].color);
        }
      }
    });
    timeAxisAndBrush(svg, state, labelW, plotW, shown.length * laneH, bw);
  }

  /**
   * The time axis under a timeline's lanes (`plotH` px tall, buckets `bw` px wide) and the brush over
   * them: a dragged window selects whole buckets into state.b0..b1 and renders the page. Returns the
   * brush and its group (to move it: group.call(brush.move, ...)).
   */
  function timeAxisAndBrush(svg, state, labelW, plotW, plotH, bw) {
    var axis = d3
      .scaleLinear()
      .domain([view.bucketMs(data, 0), view.bucketMs(data, data.bucketCount)])
      .range([0, plotW]);
    svg
      .append('g')
      .attr('transform', 'translate(' + labelW + ',' + plotH + ')')
      .call(
        d3
          .axisBottom(axis)
          .ticks(8)
          .tickFormat(function (ms) {
            return ms + ' ms';
          }),
      );
    var brush = d3
      .brushX()
      .extent([
        [0, 0],
        [plotW, plotH],
      ])
      .on('end', function (event) {
        if (!event.sourceEvent) return; // our own snap below
        if (!event.selection) {
          state.b0 = 0;
          state.b1 = data.bucketCount;
        } else {
          state.b0 = Math.max(0, Math.floor(event.selection[0] / bw));
          state.b1 = Math.min(data.bucketCount, Math.max(state.b0 + 1, Math.ceil(event.selection[1] / bw)));
          // Snap to whole buckets: the window shown is exactly the one counted.
          d3.select(this).call(brush.move, [state.b0 * bw, state.b1 * bw]);
        }
        page.render();
      });
    var group = svg
      .append('g')
      .attr('id', 'brush')
      .attr('transform', 'translate(' + labelW + ',0)')
      .call(brush);
    return { brush: brush, group: group };
  }

  function initDiff() {
    var tree = data.tree;
    var maxAbs = 1;
    (function walk(d) {
      maxAbs = Math.max(maxAbs, Math.abs(d.delta));
      (d.children || []).forEach(walk);
    })(tree);
    chart.setColorMapper(function (d, original) {
      if (d.highlight) return original;
      var delta = d.data.delta;
      var k = Math.min(1, Math.abs(delta) / maxAbs);
      var fade = Math.round(235 - 200 * k);
      // red = grew, blue = shrank, grey = unchanged
      if (delta > 0) return 'rgb(235,' + fade + ',' + fade + ')';
      if (delta < 0) return 'rgb(' + fade + ',' + fade + ',235)';
      return 'rgb(225,225,225)';
    });
    chart.setLabelHandler(function (d) {
      var s = d.data.delta > 0 ? '+' : '';
      return (
        d.data.name +
        (where(d) ? '  ' + where(d) : '') +
        '  ·  base ' +
        fmt(d.data.base) +
        ', new ' +
        fmt(d.data.value) +
        ' (' +
        s +
        fmt(d.data.delta) +
        ')'
      );
    });
    d3.select('#chart').datum(tree).call(chart);
    var body = $('functions').querySelector('tbody');
    data.rows.slice(0, 40).forEach(function (r) {
      var tr = document.createElement('tr');
      tr.dataset.name = r.funcname;
      tr.dataset.file = r.filename;
      tr.dataset.selfDelta = String(r.selfDelta);
      tr.className = r.selfDelta > 0 ? 'grew' : r.selfDelta < 0 ? 'shrank' : '';
      [
        fmtDelta(r.selfDelta),
        r.baseSelf.toFixed(data.normalized ? 1 : 0),
        r.newSelf,
        fmtDelta(r.totalDelta),
        r.funcname || '(anonymous)',
        r.filename,
      ].forEach(function (cell, i) {
        appendCell(tr, cell, i < 4);
      });
      body.appendChild(tr);
    });
    page.ready = true;
  }

  function fmtDelta(v) {
    var r = Math.round(v * 10) / 10;
    return (r > 0 ? '+' : '') + r;
  }

  page.ready = true;
})();
