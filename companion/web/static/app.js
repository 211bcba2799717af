// Live updates without polling: one EventSource; on each event the page's live
// regions ([data-part]) are re-rendered by the server (Jinja escapes everything)
// and swapped in.  Keyboard: 1-5 jump between pages, when not typing in a field.
(function () {
  "use strict";
  var parts = Array.prototype.slice.call(document.querySelectorAll("[data-part]"));
  var busy = false, again = false;

  function refresh() {
    if (busy) { again = true; return Promise.resolve(); }
    busy = true;
    var query = window.location.search;
    return Promise.all(parts.map(function (el) {
      return fetch("/parts/" + el.dataset.part + query, { headers: { Accept: "text/html" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) { if (html !== null) { el.innerHTML = html; } });
    })).catch(function () { /* the next event retries */ }).then(function () {
      busy = false;
      if (again) { again = false; return refresh(); }
    });
  }

  function flash() {
    var box = document.querySelector(".verdict-box, .watch-verdict");
    if (!box) { return; }
    box.classList.remove("flash");
    void box.offsetWidth;  // restart the animation
    box.classList.add("flash");
  }

  if (parts.length && window.EventSource) {
    var source = new EventSource("/api/events");
    source.onmessage = function (event) {
      var message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      var seq = message.state ? String(message.state.seq) : "";
      if (seq && seq === document.body.dataset.seq && message.type === "hello") { return; }
      document.body.dataset.seq = seq;
      refresh().then(function () {
        document.body.dataset.shownSeq = seq;
        if (message.type === "table" || message.type === "override") { flash(); }
      });
    };
    source.onerror = function () { document.body.classList.add("offline"); };
    source.onopen = function () { document.body.classList.remove("offline"); };
  }

  var nav = Array.prototype.slice.call(document.querySelectorAll("header.top nav a"));
  document.addEventListener("keydown", function (event) {
    var t = event.target;
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) { return; }
    var n = parseInt(event.key, 10);
    if (n >= 1 && n <= nav.length) { window.location.href = nav[n - 1].href; }
  });
})();
