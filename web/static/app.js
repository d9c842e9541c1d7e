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
  // A comment being written is never thrown away by an update: the
  // update waits until the comment is sent or cancelled.
  function busy() {
    var open = false;
    document.querySelectorAll("form.comment textarea").forEach(function (t) { if (t.value.trim()) open = true; });
    return open;
  }
  function reload() {
    if (busy()) { again = true; return; }
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
        if (typeof showTerms === "function") showTerms();
      })
      .catch(function () { live.textContent = "reload failed"; })
      .finally(function () { loading = false; if (again) { again = false; reload(); } });
  }

  clock(); bars();
  setInterval(bars, 10000);

  // The scenario runner steps with the arrow keys and has no event stream;
  // playing, it moves to the next step by itself until the last.
  if (!main().dataset.live) {
    if (main().dataset.play) {
      var nextStep = document.querySelector('a[rel="next"]');
      if (nextStep) setTimeout(function () { location.href = nextStep.href; }, 1500);
    }
    document.addEventListener("keydown", function (ev) {
      var rel = ev.key === "ArrowRight" ? "next" : ev.key === "ArrowLeft" ? "prev" : "";
      var a = rel && document.querySelector('a[rel="' + rel + '"]');
      if (a && !ev.target.closest("select, input")) location.href = a.href;
    });
    return;
  }
  // Review: a comment on a line, a file or the whole change goes to the
  // agent as one handoff (POST /api/handoff with the page's anti-forgery
  // token). All text is set with textContent: nothing typed or received
  // becomes markup.
  var csrf = document.querySelector('meta[name="rally-csrf"]');
  function commentForm(btn) {
    var card = btn.closest(".card"), anchor = btn.dataset.anchor || "";
    var f = document.createElement("form");
    f.className = "comment";
    var label = document.createElement("div");
    label.className = "meta";
    label.textContent = "to " + card.dataset.tool + (anchor ? " on " + anchor : " on the whole change") +
      " at " + (card.dataset.revision || "").slice(0, 7);
    var ta = document.createElement("textarea");
    ta.name = "body"; ta.rows = 3; ta.required = true; ta.maxLength = 65536;
    ta.placeholder = "your comment (sent as a handoff)";
    var send = document.createElement("button");
    send.type = "submit"; send.textContent = "Send to " + card.dataset.tool;
    var cancel = document.createElement("button");
    cancel.type = "button"; cancel.textContent = "Cancel"; cancel.className = "cancel";
    var out = document.createElement("span");
    out.className = "out";
    f.append(label, ta, send, cancel, out);
    cancel.addEventListener("click", function () { f.closest(".cform") ? f.closest(".cform").remove() : f.remove(); if (again) { again = false; reload(); } });
    f.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var body = ta.value.trim();
      if (!body) return;
      send.disabled = true;
      var req = { target: card.dataset.tool, subject: "review of " + card.dataset.branch + " at " + (card.dataset.revision || "").slice(0, 7) + (anchor ? ": " + anchor : ""),
        body: body, files: anchor ? [anchor] : [], revision: card.dataset.revision || "" };
      fetch("/api/handoff?token=" + encodeURIComponent(token), { method: "POST",
        headers: { "Content-Type": "application/json", "X-Rally-CSRF": csrf ? csrf.content : "" }, body: JSON.stringify(req) })
        .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }, function () { return { ok: r.ok, j: {} }; }); })
        .then(function (res) {
          if (!res.ok) throw new Error((res.j.error && res.j.error.message) || "refused");
          var id = res.j.facts && res.j.facts[0] && res.j.facts[0].id;
          ta.value = "";
          var d = res.j.delivery;
          out.textContent = "sent as handoff " + (id || "") + (d && d.queued ? "; queued until the agent is at its prompt" + (d.why ? " (" + d.why + ")" : "") :
            d ? " and delivered to its terminal" : res.j.delivery_error ? "; not delivered: " + res.j.delivery_error : "");
          f.classList.add("sent");
          reload();
        })
        .catch(function (e) { out.textContent = "not sent: " + e.message; send.disabled = false; });
    });
    return f;
  }
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest(".cbtn");
    if (!btn || !btn.closest("#work[data-writable]")) return;
    var f = commentForm(btn), row = btn.closest("tr");
    if (row) {
      var tr = document.createElement("tr"), td = document.createElement("td");
      tr.className = "cform"; td.colSpan = 3; td.append(f); tr.append(td);
      row.after(tr);
    } else if (btn.classList.contains("whole")) {
      btn.before(f);
    } else {
      btn.closest(".fhead").after(f);
    }
    f.querySelector("textarea").focus();
  });

  var es = new EventSource("/events?token=" + encodeURIComponent(token) + (document.querySelector("pre.term") ? "&terms=1" : ""));
  // The newest lines of each terminal: a streamed update, or the page's
  // own when an update re-rendered it with newer ones.
  var terms = {};
  function showTerms() {
    if (!terms) return;
    document.querySelectorAll("pre.term").forEach(function (p) {
      var t = terms[p.dataset.term];
      if (t && t.at >= Number(p.dataset.at || 0)) {
        p.firstElementChild.textContent = (t.lines || []).join("\n");
        p.dataset.at = t.at;
      }
    });
  }
  es.addEventListener("term", function (ev) {
    var t;
    try { t = JSON.parse(ev.data); } catch (e) { return; }
    terms[t.session] = t;
    showTerms();
  });
  es.addEventListener("open", function () { live.textContent = "live"; live.className = "live on"; });
  es.addEventListener("error", function () { live.textContent = "reconnecting"; live.className = "live"; });
  es.addEventListener("head", function (ev) {
    if (ev.data !== main().dataset.head) reload();
  });
})();
