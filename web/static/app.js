// The page keeps itself current: one event stream tells when the ledger
// moved, and the view's main part is fetched again, rendered (and escaped)
// by the server. Nothing polls.
(function () {
  "use strict";
  var token = document.body.dataset.token;
  var live = document.getElementById("live");
  var skew = 0;

  function main() { return document.getElementById("main"); }

  function clock() {
    var m = main();
    var t = Date.parse(m && m.dataset.now);
    if (!isNaN(t)) skew = t - Date.now();
  }

  function ago(ms) {
    var s = Math.round(Math.abs(ms) / 1000), out;
    if (s < 5) return "just now";
    if (s < 60) out = s + "s";
    else if (s < 3600) out = Math.floor(s / 60) + "m";
    else if (s < 86400) out = Math.floor(s / 3600) + "h" + (Math.floor(s / 60) % 60 ? Math.floor(s / 60) % 60 + "m" : "");
    else out = Math.floor(s / 86400) + "d";
    return ms >= 0 ? out + " ago" : "in " + out;
  }

  // Lease bars shrink and times read "3m ago" as time passes, from the
  // browser's clock set to the server's.
  function bars() {
    var now = Date.now() + skew;
    document.querySelectorAll("time[datetime]").forEach(function (t) {
      var at = Date.parse(t.getAttribute("datetime"));
      if (isNaN(at)) return;
      t.title = t.getAttribute("datetime");
      t.textContent = ago(now - at);
    });
    document.querySelectorAll(".bar[data-end]").forEach(function (b) {
      var a = Date.parse(b.dataset.start), e = Date.parse(b.dataset.end);
      if (isNaN(a) || isNaN(e) || e <= a) return;
      var left = Math.max(0, Math.min(100, 100 * (e - now) / (e - a)));
      b.firstElementChild.style.width = left.toFixed(1) + "%";
    });
  }

  var loading = false, again = false;
  function reload() {
    if (loading) { again = true; return; }
    loading = true;
    var q = new URLSearchParams(location.search);
    q.set("token", token);
    q.set("part", "main");
    fetch(location.pathname + "?" + q.toString(), { headers: { "X-Rally-Token": token } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        // The server rendered this with html/template: every peer text is escaped.
        main().outerHTML = html;
        clock(); bars();
      })
      .catch(function () { live.textContent = "reload failed"; })
      .finally(function () { loading = false; if (again) { again = false; reload(); } });
  }

  clock(); bars();
  setInterval(bars, 10000);

  // The scenario runner steps with the arrow keys and has no event stream.
  if (!main().dataset.live) {
    document.addEventListener("keydown", function (ev) {
      var rel = ev.key === "ArrowRight" ? "next" : ev.key === "ArrowLeft" ? "prev" : "";
      var a = rel && document.querySelector('a[rel="' + rel + '"]');
      if (a && !ev.target.closest("select, input")) location.href = a.href;
    });
    return;
  }
  var es = new EventSource("/events?token=" + encodeURIComponent(token));
  es.addEventListener("open", function () { live.textContent = "live"; live.className = "live on"; });
  es.addEventListener("error", function () { live.textContent = "reconnecting"; live.className = "live"; });
  es.addEventListener("head", function (ev) {
    if (ev.data !== main().dataset.head) reload();
  });
})();
