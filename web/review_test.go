package web

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// reviewSource is a fake source that also reviews: it records every
// handoff it is asked to write.
type reviewSource struct {
	fakeSource
	mu     sync.Mutex
	sent   []HandoffRequest
	diff   string
	stamp  string
	lines  []string
	hlog   string // log --kind handoff
	answer string // log --kind receipt
	moved  int    // BranchesMoved calls
}

func (r *reviewSource) BranchesMoved() {
	r.mu.Lock()
	r.moved++
	r.mu.Unlock()
}

func (r *reviewSource) movedCalls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.moved
}

func (r *reviewSource) Diff(branch string) ([]byte, error) { return []byte(r.diff), nil }
func (r *reviewSource) Branches() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stamp, nil
}
func (r *reviewSource) Capture(string, int) ([]string, error) { return r.lines, nil }
func (r *reviewSource) Handoff(h HandoffRequest) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, h)
	return []byte(`{"facts": [{"id": "f_new", "kind": "handoff"}]}`), nil
}
func (r *reviewSource) Log(kind, tool string, n int) ([]byte, error) {
	switch kind {
	case "handoff":
		return []byte(r.hlog), nil
	case "receipt":
		return []byte(r.answer), nil
	case "resolve", "artifact":
		return []byte("[]"), nil
	}
	return r.fakeSource.Log(kind, tool, n)
}

const reviewRoom = `{"head":"h1","clock":3,"peers":[{"tool":"codex:01","session":"codex-01","state":"active","last_seen":"2026-01-05T09:00:00.000Z",
"activity":"needs-input","activity_since":"2026-01-05T09:39:00.000Z"}],"claims":[],"handoffs":[],"blockers":[],"risks":[],
"worktrees":[{"name":"codex-01","path":"/r/.rally/worktrees/codex-01","branch":"rally/codex-01","tool":"codex:01","session":"codex-01"}],
"sessions":[{"session":"codex-01","tool":"codex:01","agent":"codex","state":"live","worktree":"/r/.rally/worktrees/codex-01"}],
"totals":{"facts":3,"retracted":0,"by_kind":{"session":1}}}`

const reviewDiff = `{"branch":"rally/codex-01","owner":"codex:01","base":"main","base_head":"b0b0b0b0","revision":"c1c1c1c1c1",
"files":[{"path":"src/<b>.go","added":2,"removed":1}],
"diff":"diff --git a/src/<b>.go b/src/<b>.go\nindex 1..2 100644\n--- a/src/<b>.go\n+++ b/src/<b>.go\n@@ -1,2 +1,3 @@\n package x\n-var a = 1\n+var a = \"<script>window.__pwned=1</script>\"\n+var b = 2\n",
"conflicts":[{"branch":"rally/claude-01","owner":"claude_code:01","files":["src/<b>.go"]}]}`

func startReview(t *testing.T, o Options) (*reviewSource, string, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := &reviewSource{fakeSource: fakeSource{head: "h1", room: reviewRoom}, diff: reviewDiff, stamp: "s1",
		lines: []string{"$ working", "<b>bold?</b>"},
		hlog: `[{"id":"f_h1","kind":"handoff","tool":"human:ana","target":"codex:01","subject":"review","body":"<i>why</i> this?",
"files":["src/<b>.go:2"],"revision":"c1c1c1c1c1","clock":2,"at":"2026-01-05T09:30:00.000Z"},
{"id":"f_h2","kind":"handoff","tool":"human:ana","target":"codex:01","subject":"review","body":"rename it",
"files":["src/<b>.go"],"revision":"c1c1c1c1c1","clock":4,"at":"2026-01-05T09:32:00.000Z"}]`,
		answer: `[{"id":"f_r1","kind":"receipt","tool":"codex:01","ref":"f_h1","clock":3,"at":"2026-01-05T09:31:00.000Z"},
{"id":"f_r2","kind":"receipt","tool":"codex:01","ref":"f_h2","status":"rejected","reason":"the name is the API's","clock":5,"at":"2026-01-05T09:33:00.000Z"}]`}
	o.Source, o.Token, o.CSRF = src, "tok", "csrf1"
	o.Watcher = &PollWatcher{Head: src.Head, Interval: 10 * time.Millisecond}
	o.Now = func() time.Time { return time.Date(2026, 1, 5, 9, 40, 0, 0, time.UTC) }
	s, err := New(ln, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return src, "http://" + ln.Addr().String(), ln.Addr().String()
}

func post(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const goodReview = `{"target":"codex:01","subject":"review of rally/codex-01","body":"why?","files":["src/a.go:2"],"revision":"c1c1c1c1c1"}`

func TestHandoffWriteGuard(t *testing.T) {
	src, base, addr := startReview(t, Options{Tool: "human:ana"})
	ok := map[string]string{"X-Rally-CSRF": "csrf1", "Content-Type": "application/json"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range ok {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name, method, url, body string
		hdr                     map[string]string
	}{
		{"GET", "GET", base + "/api/handoff?token=tok", "", ok},
		{"PUT", "PUT", base + "/api/handoff?token=tok", goodReview, ok},
		{"no token", "POST", base + "/api/handoff", goodReview, ok},
		{"wrong token", "POST", base + "/api/handoff?token=tik", goodReview, ok},
		{"no anti-forgery token", "POST", base + "/api/handoff?token=tok", goodReview, with("X-Rally-CSRF", "")},
		{"wrong anti-forgery token", "POST", base + "/api/handoff?token=tok", goodReview, with("X-Rally-CSRF", "tok")},
		{"foreign Origin", "POST", base + "/api/handoff?token=tok", goodReview, with("Origin", "http://attacker.example")},
		{"null Origin", "POST", base + "/api/handoff?token=tok", goodReview, with("Origin", "null")},
		{"cross-site", "POST", base + "/api/handoff?token=tok", goodReview, with("Sec-Fetch-Site", "cross-site")},
		{"a form's body", "POST", base + "/api/handoff?token=tok", goodReview, with("Content-Type", "text/plain")},
		{"url-encoded form", "POST", base + "/api/handoff?token=tok", "target=codex:01", with("Content-Type", "application/x-www-form-urlencoded")},
	} {
		req, _ := http.NewRequest(c.method, c.url, strings.NewReader(c.body))
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("%s: %d, want 403", c.name, resp.StatusCode)
		}
	}
	if len(src.sent) != 0 {
		t.Fatalf("a refused request wrote: %+v", src.sent)
	}
	if code, body := post(t, base+"/api/handoff?token=tok", `{"target":"x","extra":1}`, ok); code != 400 {
		t.Errorf("unknown field: %d %s", code, body)
	}
	code, body := post(t, base+"/api/handoff?token=tok", goodReview, with("Origin", "http://"+addr))
	if code != 200 || !strings.Contains(body, `"f_new"`) {
		t.Fatalf("a good review: %d %s", code, body)
	}
	want := HandoffRequest{Target: "codex:01", Subject: "review of rally/codex-01", Body: "why?", Files: []string{"src/a.go:2"}, Revision: "c1c1c1c1c1"}
	if len(src.sent) != 1 || src.sent[0].Target != want.Target || src.sent[0].Files[0] != want.Files[0] || src.sent[0].Revision != want.Revision || src.sent[0].Body != want.Body {
		t.Errorf("sent %+v, want %+v", src.sent, want)
	}
	_, page := get(t, base+"/?token=tok", nil, "")
	if !strings.Contains(page, `<meta name="rally-csrf" content="csrf1">`) || !strings.Contains(page, `data-writable="1"`) {
		t.Errorf("the page lacks the anti-forgery token or the writable mark")
	}
}

func TestReadOnlyOffersNoWrite(t *testing.T) {
	for _, o := range []Options{{Tool: "human:ana", ReadOnly: true}, {ReadOnlyWhy: "no identity: try --tool"}} {
		src, base, _ := startReview(t, o)
		code, _ := post(t, base+"/api/handoff?token=tok", goodReview, map[string]string{"X-Rally-CSRF": "csrf1", "Content-Type": "application/json"})
		if code != 403 || len(src.sent) != 0 {
			t.Errorf("%+v: %d, %d written, want 403 and none", o, code, len(src.sent))
		}
		_, page := get(t, base+"/?token=tok", nil, "")
		if strings.Contains(page, "rally-csrf") || strings.Contains(page, "data-writable") || !strings.Contains(page, `class="readonly"`) {
			t.Errorf("%+v: the read-only page offers a write or does not say why", o)
		}
	}
}

func TestWorkCard(t *testing.T) {
	_, base, _ := startReview(t, Options{Tool: "human:ana"})
	_, page := get(t, base+"/?token=tok&part=main", nil, "")
	for _, want := range []string{
		`class="attention"`, "needs input", `data-branch="rally/codex-01"`, `data-revision="c1c1c1c1c1"`,
		"conflicts with <code>rally/claude-01</code>", "claude_code:01",
		`data-anchor="src/&lt;b&gt;.go:2"`, `data-anchor="src/&lt;b&gt;.go:3"`,
		"&lt;script&gt;window.__pwned=1&lt;/script&gt;", "&lt;b&gt;bold?&lt;/b&gt;", "&lt;i&gt;why&lt;/i&gt; this?",
		`class="badge rv-acknowledged">acknowledged`, `href="/history?token=tok#f_r1"`,
		`class="badge rv-rejected">rejected`, `href="/history?token=tok#f_r2"`, "the name is the API&#39;s",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the work card lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>window") || strings.Contains(page, "<i>why") || strings.Contains(page, "<b>bold") {
		t.Errorf("peer text rendered as markup")
	}
	// The review sits beside line 2 of the new side: the row after it.
	i := strings.Index(page, `data-line="2"`)
	if i < 0 || !strings.Contains(page[i:i+strings.Index(page[i:], "</tr>")+400], `data-id="f_h1"`) {
		t.Errorf("the review is not beside line 2")
	}
	_, diff := get(t, base+"/api/diff?branch=rally/codex-01&token=tok", nil, "")
	var v map[string]any
	if err := json.Unmarshal([]byte(diff), &v); err != nil || v["revision"] != "c1c1c1c1c1" {
		t.Errorf("/api/diff: %v %s", err, diff)
	}
}

func TestParseDiff(t *testing.T) {
	var d diffData
	json.Unmarshal([]byte(reviewDiff), &d)
	fs := parseDiff(&d)
	if len(fs) != 1 {
		t.Fatalf("%d files", len(fs))
	}
	var got []string
	for _, l := range fs[0].Lines {
		got = append(got, l.Kind+":"+itoa(l.Old)+":"+itoa(l.New))
	}
	if want := "hunk:0:0 ctx:1:1 del:2:0 add:0:2 add:0:3"; strings.Join(got, " ") != want {
		t.Errorf("lines %s, want %s", strings.Join(got, " "), want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A branch that moves without a new fact still reaches the page.
func TestEventsFollowTheBranches(t *testing.T) {
	src, base, _ := startReview(t, Options{Tool: "human:ana"})
	resp, err := http.Get(base + "/events?token=tok")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	first := string(buf[:n])
	src.mu.Lock()
	src.stamp = "s2"
	src.mu.Unlock()
	n, _ = resp.Body.Read(buf)
	// The source was told at the start and when the branches moved.
	for i := 0; i < 100 && src.movedCalls() < 2; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if m := src.movedCalls(); m != 2 {
		t.Errorf("BranchesMoved called %d times, want 2 (the start, the move)", m)
	}
	if next := string(buf[:n]); !strings.Contains(next, "event: head") || !strings.Contains(next, "data: h1.") || strings.Contains(first, strings.TrimPrefix(next, "event: head\n")) {
		t.Errorf("after the branches moved: %q (first %q)", next, first)
	}
}

// The terminals stream over the event stream, as JSON (no markup).
func TestTermEvents(t *testing.T) {
	_, base, _ := startReview(t, Options{Tool: "human:ana"})
	get(t, base+"/?token=tok", nil, "") // the page: its live sessions
	resp, err := http.Get(base + "/events?token=tok&terms=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 8192)
	got := ""
	for i := 0; i < 3 && !strings.Contains(got, "event: term"); i++ {
		n, _ := resp.Body.Read(buf)
		got += string(buf[:n])
	}
	if !strings.Contains(got, `event: term`) || !strings.Contains(got, `\u003cb\u003ebold?`) || !strings.Contains(got, `"at":`) {
		t.Errorf("no term event: %q", got)
	}
}

func TestWorktreePaths(t *testing.T) {
	for in, want := range map[string]string{
		"run aider as aider:api-01 in /tmp/x/shop/.rally/worktrees/aider-api-01 -> t": "run aider as aider:api-01 in .rally/worktrees/aider-api-01 -> t",
		"/a/.rally/worktrees/x and /b/.rally/worktrees/y":                             ".rally/worktrees/x and .rally/worktrees/y",
		"no path here": "no path here",
	} {
		if got := worktreePathsIn(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	if got := worktreePath("/r/.rally/worktrees/a"); got != ".rally/worktrees/a" {
		t.Errorf("worktreePath: %q", got)
	}
}
