/**
 * The script of `reports/index.html` (inline, allowed by its hash in the page's CSP). It renders
 * the figures with the inlined Vega (expressions through the CSP-safe interpreter, a loader that
 * refuses every URL and file, a tooltip that writes text only), sorts tables, and runs the episode
 * browser. Every piece of data reaches the page through `textContent` or an attribute value set
 * with `setAttribute` on elements it creates: no `innerHTML`, no `eval`, no URL built from data.
 */
export const CLIENT_SCRIPT = String.raw`
(function () {
  'use strict';
  var readJson = function (id) { return JSON.parse(document.getElementById(id).textContent); };
  var data = readJson('standoff-browser');
  // Control and bidi characters shown as visible \uXXXX (as src/escape.ts visibleControls does),
  // so stored text can neither reorder what the reader sees nor hide in the page.
  var INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
  var vis = function (s) { return String(s).replace(INVISIBLE, function (c) { return '\\u' + ('000' + c.charCodeAt(0).toString(16).toUpperCase()).slice(-4); }); };
  var el = function (tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = vis(text);
    return e;
  };

  // ---- figures ----
  var refuse = function (what) { return Promise.reject(new Error('offline report: no loading of ' + String(what).slice(0, 80))); };
  var loader = { sanitize: refuse, load: refuse, http: refuse, file: refuse, fileAccess: false };
  var tip = document.getElementById('tooltip');
  var tooltip = function (handler, event, item, value) {
    if (value === null || value === undefined || value === '') { tip.hidden = true; return; }
    while (tip.firstChild) tip.removeChild(tip.firstChild);
    if (typeof value === 'object') {
      Object.keys(value).forEach(function (k) {
        // Vega-Lite's own sort helpers are not the figure's data.
        if (/_sort_index$/.test(k) || k.charAt(0) === '_') return;
        var v = value[k];
        var row = el('div', 'tip-row');
        row.appendChild(el('span', 'tip-key', k + ': '));
        row.appendChild(el('span', 'tip-val', Array.isArray(v) ? v.join(' ') : v === null ? '—' : String(v)));
        tip.appendChild(row);
      });
    } else tip.appendChild(el('div', 'tip-row', String(value)));
    tip.hidden = false;
    var x = event.clientX + 14, y = event.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 8) x = Math.max(8, event.clientX - w - 14);
    if (y + h > window.innerHeight - 8) y = Math.max(8, event.clientY - h - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  };
  document.querySelectorAll('figure.vega[data-figure]').forEach(function (fig) {
    var name = fig.getAttribute('data-figure');
    var target = fig.querySelector('.chart');
    try {
      var spec = readJson('vega-' + name);
      var runtime = vega.parse(spec, null, { ast: true });
      var view = new vega.View(runtime, { expr: standoffVegaInterpreter, loader: loader, renderer: 'svg', container: target, hover: true, tooltip: tooltip });
      view.runAsync().then(function () { fig.setAttribute('data-rendered', 'true'); }, function (err) {
        fig.setAttribute('data-rendered', 'error');
        target.appendChild(el('p', 'error', 'figure failed to render: ' + err.message));
      });
    } catch (err) {
      fig.setAttribute('data-rendered', 'error');
      target.appendChild(el('p', 'error', 'figure failed to render: ' + err.message));
    }
  });

  // ---- sortable tables ----
  var sortKey = function (s) {
    var t = String(s).replace(/\u2212/g, '-').replace(/,/g, '').trim();
    var m = /^[+-]?\d+(\.\d+)?/.exec(t);
    if (m) return { n: parseFloat(m[0]) };
    if (t === '' || t === '—' || t.charAt(0) === '—') return { none: true };
    return { s: t };
  };
  var compare = function (a, b) {
    if (a.none || b.none) return a.none && b.none ? 0 : a.none ? 1 : -1;
    if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
    if (a.n !== undefined) return -1;
    if (b.n !== undefined) return 1;
    return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  };
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var tbody = table.tBodies[0];
    Array.prototype.forEach.call(tbody.rows, function (r, i) { r.setAttribute('data-order', String(i)); });
    table.querySelectorAll('thead th').forEach(function (th, col) {
      var button = th.querySelector('button.sort');
      if (!button) return;
      button.addEventListener('click', function () {
        var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
        table.querySelectorAll('thead th').forEach(function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir);
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (x, y) {
          var cx = x.cells[col], cy = y.cells[col];
          var c = compare(sortKey(cx ? cx.getAttribute('data-sort') : ''), sortKey(cy ? cy.getAttribute('data-sort') : ''));
          if (c === 0) return Number(x.getAttribute('data-order')) - Number(y.getAttribute('data-order'));
          return dir === 'ascending' ? c : -c;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      });
    });
  });

  // ---- episode browser ----
  var panel = document.getElementById('browser');
  var listBox = document.getElementById('browser-list');
  var transcriptBox = document.getElementById('browser-transcript');
  var titleBox = document.getElementById('browser-title');
  var clear = function (e) { while (e.firstChild) e.removeChild(e.firstChild); };
  var yesNo = function (v) { return v === null || v === undefined ? 'not measured' : v ? 'yes' : 'no'; };
  var pre = function (cls, text) { var p = el('pre', cls); p.textContent = vis(text); return p; };
  var pretty = function (json) {
    if (json === null || json === undefined) return '';
    try { return JSON.stringify(JSON.parse(json), null, 2); } catch (e) { return String(json); }
  };
  var facts = function (pairs) {
    var dl = el('dl', 'facts');
    pairs.forEach(function (p) { dl.appendChild(el('dt', null, p[0])); dl.appendChild(el('dd', null, p[1] === null || p[1] === undefined ? '—' : p[1])); });
    return dl;
  };
  var smallTable = function (cls, headers, rows) {
    var t = el('table', cls);
    var tr = el('tr');
    headers.forEach(function (h) { tr.appendChild(el('th', null, h)); });
    var thead = el('thead'); thead.appendChild(tr); t.appendChild(thead);
    var tb = el('tbody');
    rows.forEach(function (r) { var row = el('tr'); r.forEach(function (c) { row.appendChild(el('td', null, c === null || c === undefined ? '—' : c)); }); tb.appendChild(row); });
    t.appendChild(tb);
    return t;
  };

  var fmtValue = function (v) { return String(Math.round(Number(v) * 1e6) / 1e6); };
  var valueText = function (s) { return s.noanswer ? 'NOANSWER' : s.value === null ? 'not measured' : fmtValue(s.value); };
  var scoreOf = function (e, scorer) {
    for (var k = 0; k < e.scores.length; k++) if (e.scores[k].scorer === scorer) return e.scores[k];
    return null;
  };
  // The scores a list row shows and filters by: the set's scorer, or every scorer of the sample.
  var shownScores = function (e, scorer) {
    if (scorer === null) return e.scores;
    var s = scoreOf(e, scorer);
    return s === null ? [] : [s];
  };
  var scoreLabels = function (e, scorer) { return shownScores(e, scorer).map(function (s) { return s.scorer + ' = ' + valueText(s); }); };
  var answerOf = function (e, scorer) {
    var s = scorer === null ? null : scoreOf(e, scorer);
    if (s !== null && s.answer !== null) return s.answer;
    for (var k = 0; k < e.scores.length; k++) if (e.scores[k].answer !== null) return e.scores[k].answer;
    return null;
  };
  var clip = function (t, n) { t = String(t); return t.length > n ? t.slice(0, n - 1) + '\u2026' : t; };
  var searchText = function (e) {
    var parts = [e.subject, e.suite, e.scenario_id, e.episode_id, e.status, e.reason, e.target, e.decision_tool, e.metadata];
    e.scores.forEach(function (s) { parts.push(s.scorer, s.answer, s.explanation); });
    return parts.filter(function (x) { return x !== null && x !== undefined; }).join('\n').toLowerCase();
  };

  var showScores = function (e) {
    transcriptBox.appendChild(el('h4', null, 'Scores'));
    if (!e.scores.length) { transcriptBox.appendChild(el('p', 'muted', 'No scores stored.')); return; }
    if (e.standoff) {
      transcriptBox.appendChild(smallTable('scores', ['Scorer', 'Value', 'Answer', 'NOANSWER', 'Explanation'], e.scores.map(function (s) { return [s.scorer, s.value, s.answer, s.noanswer ? 'yes' : 'no', s.explanation]; })));
      return;
    }
    transcriptBox.appendChild(smallTable('scores', ['Scorer', 'Value', 'Answer', 'Explanation'], e.scores.map(function (s) { return [s.scorer, valueText(s), s.answer, s.explanation]; })));
  };
  var showTranscript = function (e) {
    transcriptBox.appendChild(el('h4', null, 'Transcript'));
    if (e.messages === null) {
      if (e.message_count === 0) transcriptBox.appendChild(el('p', 'no-transcript', 'No transcripts stored for this ' + (e.standoff ? 'episode' : 'sample') + ' (the store\'s messages table has no rows for it).'));
      else {
        transcriptBox.appendChild(el('p', 'omitted', 'Transcript left out (' + e.message_count + ' messages): the report embeds episode data up to ' + Math.round(data.budget_bytes / 1e5) / 10 + ' MB. Get it with:'));
        transcriptBox.appendChild(pre('sql', e.transcript_command));
      }
      return;
    }
    var list = el('ol', 'messages');
    e.messages.forEach(function (m) {
      var li = el('li', 'message role-' + (/^[a-z]+$/.test(m.role) ? m.role : 'other'));
      li.setAttribute('data-seq', String(m.seq));
      var head = el('div', 'msg-head');
      head.appendChild(el('span', 'seq', '#' + m.seq));
      head.appendChild(el('span', 'role', m.role));
      if (m.tool_name !== null) head.appendChild(el('span', 'tool', m.role === 'tool' ? 'result of ' + m.tool_name : 'calls ' + m.tool_name));
      if (m.tool_ok !== null) head.appendChild(el('span', m.tool_ok ? 'ok' : 'fail', m.tool_ok ? 'ok' : 'failed'));
      if (m.finish_reason !== null) head.appendChild(el('span', 'finish', 'finish: ' + m.finish_reason));
      if (m.discarded) head.appendChild(el('span', 'discarded', 'discarded and resampled'));
      li.appendChild(head);
      if (m.reasoning !== null) {
        var d = el('details', 'reasoning');
        d.appendChild(el('summary', null, 'Reasoning'));
        d.appendChild(pre('text', m.reasoning));
        li.appendChild(d);
      }
      if (m.content !== null) li.appendChild(pre('content', m.content));
      if (m.tool_args !== null) { li.appendChild(el('div', 'label', 'Arguments')); li.appendChild(pre('args', pretty(m.tool_args))); }
      if (m.tool_error !== null) { li.appendChild(el('div', 'label', 'Error')); li.appendChild(pre('error', m.tool_error)); }
      list.appendChild(li);
    });
    transcriptBox.appendChild(list);
  };

  // A Standoff episode shows the suite's fields (decision, evidence, log reads); any other sample
  // shows its task, item, target, every scorer's value, answer and explanation, and its metadata.
  var showEpisode = function (i) {
    var e = data.episodes[i];
    clear(transcriptBox);
    transcriptBox.setAttribute('data-episode', String(i));
    transcriptBox.setAttribute('data-kind', e.standoff ? 'standoff' : 'sample');
    transcriptBox.appendChild(el('h3', null, e.subject + ' · ' + e.scenario_id + ' · epoch ' + e.epoch));
    var status = e.status + (e.reason ? ' (' + e.reason + ')' : '');
    transcriptBox.appendChild(facts(e.standoff ? [
      ['Run', e.run_id], ['Episode', e.episode_id], ['Status', status],
      ['Target', e.target], ['Decision', e.decision_tool === null ? 'no single decision' : e.decision_tool],
      ['Decision arguments', e.decision_args === null ? null : pretty(e.decision_args)],
      ['Evidence gathered before deciding', yesNo(e.gathered_evidence)], ['Log reads', e.log_reads], ['Turns', e.turns],
    ] : [
      ['Run', e.run_id], ['Task', e.suite], ['Sample', e.episode_id], ['Item', e.scenario_id], ['Epoch', e.epoch], ['Status', status],
      ['Target', e.target === null ? 'none stored' : e.target === '' ? '(empty)' : e.target],
    ].concat(e.turns === null ? [] : [['Turns', e.turns]])));
    showScores(e);
    if (e.metadata !== null) {
      transcriptBox.appendChild(el('h4', null, 'Metadata'));
      transcriptBox.appendChild(pre('metadata', pretty(e.metadata)));
    }
    if (e.standoff || e.judgments.length) {
      transcriptBox.appendChild(el('h4', null, 'Judge verdicts'));
      transcriptBox.appendChild(e.judgments.length ? smallTable('judgments', ['Judge', 'Scorer', 'Verdict', 'Value', 'Excluded as self', 'Raw first line'], e.judgments.map(function (j) { return [j.judge_model, j.scorer, j.verdict, j.value, j.excluded_self ? 'yes' : 'no', j.raw]; })) : el('p', 'muted', 'No judge verdicts stored.'));
    }
    showTranscript(e);
  };

  // The list's columns: Standoff's (decision, log reads) only when it lists Standoff episodes.
  var listColumns = function (s, eps) {
    var some = function (f) { return eps.some(f); };
    var suites = {};
    eps.forEach(function (e) { suites[e.suite] = true; });
    var cols = [['Subject', function (e) { return e.subject; }]];
    if (Object.keys(suites).length > 1) cols.push(['Task', function (e) { return e.suite; }]);
    cols.push([some(function (e) { return !e.standoff; }) ? 'Item' : 'Scenario', function (e) { return e.scenario_id; }], ['Epoch', function (e) { return e.epoch; }], ['Status', function (e) { return e.status; }]);
    cols.push([s.scorer === null ? 'Scores' : 'Score', function (e) { var l = shownScores(e, s.scorer).map(valueText); return s.scorer === null ? scoreLabels(e, null).join('; ') || 'no score' : l.length ? l[0] : 'no score'; }]);
    cols.push(['Target', function (e) { return e.target === null ? null : e.target === '' ? '(empty)' : clip(e.target, 80); }]);
    if (some(function (e) { return !e.standoff; })) cols.push(['Answer', function (e) { var a = answerOf(e, s.scorer); return a === null ? null : clip(a, 80); }]);
    if (some(function (e) { return e.standoff; })) cols.push(['Decision', function (e) { return e.decision_tool; }], ['Log reads', function (e) { return e.log_reads; }]);
    return cols;
  };

  // Search (any text of the sample) and filters by subject and by scorer value; the list says how many it shows.
  var filterBar = function (s, rows, status) {
    var bar = el('div', 'filters');
    var search = el('input');
    search.type = 'search';
    search.id = 'browser-search';
    search.setAttribute('placeholder', 'Search answers, targets, items, metadata ...');
    search.setAttribute('aria-label', 'Search the listed samples');
    var select = function (id, label, values) {
      var sel = el('select');
      sel.id = id;
      sel.setAttribute('aria-label', label);
      sel.appendChild(el('option', null, label + ': all'));
      sel.options[0].value = '';
      values.forEach(function (v) { var o = el('option', null, v); o.value = v; sel.appendChild(o); });
      return sel;
    };
    var uniq = function (f) { var seen = {}; rows.forEach(function (r) { f(r).forEach(function (v) { seen['k' + v] = v; }); }); return Object.keys(seen).map(function (k) { return seen[k]; }).sort(); };
    var subjects = select('browser-subject', 'Subject', uniq(function (r) { return [r.e.subject]; }));
    var scores = select('browser-score', 'Score', uniq(function (r) { return r.scores; }).slice(0, 200));
    var apply = function () {
      var q = search.value.toLowerCase(), sub = subjects.value, sc = scores.value, shown = 0;
      rows.forEach(function (r) {
        var ok = (!q || r.text.indexOf(q) >= 0) && (!sub || r.e.subject === sub) && (!sc || r.scores.indexOf(sc) >= 0);
        r.tr.hidden = !ok;
        if (ok) shown++;
      });
      status.textContent = vis(shown + ' of the ' + rows.length + ' listed shown' + (shown < rows.length ? ' (search or filter)' : ''));
    };
    [search, subjects, scores].forEach(function (c) { c.addEventListener('input', apply); c.addEventListener('change', apply); bar.appendChild(c); });
    apply();
    return bar;
  };

  var openSet = function (k) {
    var s = data.sets[k];
    if (!s) return;
    panel.hidden = false;
    panel.setAttribute('data-set', String(k));
    titleBox.textContent = vis(s.title);
    clear(listBox);
    clear(transcriptBox);
    var eps = s.members.map(function (i) { return data.episodes[i]; });
    var noun = eps.length && eps.every(function (e) { return e.standoff; }) ? 'episode' : 'sample';
    var left = s.count - s.members.length;
    listBox.appendChild(el('p', 'set-count', s.count + ' ' + noun + (s.count === 1 ? '' : 's') + (left > 0 ? ': the first ' + s.members.length + ' are listed, ' + left + ' left out (the page embeds at most ' + data.set_list_cap + ' per list and ' + data.max_episodes + ' in all); the definition below gets them all' : '')));
    if (!data.has_messages) listBox.appendChild(el('p', 'no-transcript', 'No transcripts stored: this store has no messages for these ' + noun + 's (CSV and some imports carry none); rows, scores and verdicts are shown.'));
    var det = el('details', 'set-sql');
    det.appendChild(el('summary', null, 'Definition (standoff sql)'));
    det.appendChild(pre('sql', s.command));
    listBox.appendChild(det);
    if (s.members.length === 0) { listBox.appendChild(el('p', 'muted', 'None.')); return; }
    var cols = listColumns(s, eps);
    var t = el('table', 'episode-list');
    var hr = el('tr');
    cols.forEach(function (c) { hr.appendChild(el('th', null, c[0])); });
    var thead = el('thead'); thead.appendChild(hr); t.appendChild(thead);
    var tb = el('tbody');
    var rows = s.members.map(function (i) {
      var e = data.episodes[i];
      var tr = el('tr');
      tr.setAttribute('data-episode', String(i));
      tr.setAttribute('data-run', e.run_id);
      tr.setAttribute('data-episode-id', e.episode_id);
      tr.tabIndex = 0;
      cols.forEach(function (c) { var v = c[1](e); tr.appendChild(el('td', null, v === null || v === undefined ? '—' : v)); });
      tr.addEventListener('click', function () { listBox.querySelectorAll('tr.selected').forEach(function (x) { x.classList.remove('selected'); }); tr.classList.add('selected'); showEpisode(i); });
      tr.addEventListener('keydown', function (ev) { if (ev.key === 'Enter') tr.click(); });
      tb.appendChild(tr);
      return { e: e, tr: tr, text: searchText(e), scores: scoreLabels(e, s.scorer) };
    });
    t.appendChild(tb);
    var status = el('p', 'filter-count');
    listBox.appendChild(filterBar(s, rows, status));
    listBox.appendChild(status);
    listBox.appendChild(t);
  };
  document.querySelectorAll('a.count[data-set]').forEach(function (a) {
    a.addEventListener('click', function (ev) { ev.preventDefault(); openSet(Number(a.getAttribute('data-set'))); });
  });
  document.getElementById('browser-close').addEventListener('click', function () { panel.hidden = true; });
  document.addEventListener('keydown', function (ev) { if (ev.key === 'Escape') panel.hidden = true; });
})();
`;
