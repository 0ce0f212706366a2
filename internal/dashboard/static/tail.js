// Live tail: subscribes to the SSE stream with the page's filters and
// prepends each new log as a table row. Text goes in via textContent only,
// so a log body can never become markup.
(function () {
  "use strict";
  var btn = document.getElementById("tail-toggle");
  var rows = document.getElementById("tail-rows");
  var status = document.getElementById("tail-status");
  if (!btn || !rows) { return; }
  var es = null;
  var maxRows = 500;
  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    tr.appendChild(td);
  }
  function stop(msg) {
    if (es) { es.close(); es = null; }
    btn.textContent = "Live tail";
    status.textContent = msg || "";
  }
  btn.addEventListener("click", function () {
    if (es) { stop("stopped"); return; }
    es = new EventSource(btn.dataset.stream);
    btn.textContent = "Stop tail";
    status.textContent = "connecting…";
    es.onopen = function () { status.textContent = "live"; document.body.dataset.tail = "live"; };
    es.onerror = function () { status.textContent = "reconnecting…"; };
    es.addEventListener("dropped", function () { stop("dropped: fell behind, click to resume"); });
    es.addEventListener("log", function (ev) {
      var l = JSON.parse(ev.data);
      var tr = document.createElement("tr");
      tr.className = "tailed";
      cell(tr, new Date(l.time_unix_nano / 1e6).toISOString().replace("T", " ").replace("Z", ""));
      cell(tr, l.severity_text || String(l.severity_number), "sev" + l.severity_number);
      cell(tr, l.service);
      cell(tr, l.body, "body");
      cell(tr, l.trace_id ? l.trace_id.slice(0, 8) : "");
      rows.insertBefore(tr, rows.firstChild);
      while (rows.childNodes.length > maxRows) { rows.removeChild(rows.lastChild); }
    });
  });
}());
