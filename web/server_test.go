package web

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeSource struct {
	mu   sync.Mutex
	head string
	room string
}

func (f *fakeSource) Room() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []byte(f.room), nil
}
func (f *fakeSource) Log(kind, tool string, n int) ([]byte, error) {
	return []byte(`[{"id":"f_1","kind":"note","tool":"a:1","subject":"<script>x()</script>","clock":1},` +
		`{"id":"f_2","kind":"retract","tool":"a:1","ref":"f_1","clock":2}]`), nil
}
func (f *fakeSource) Worktrees() ([]byte, error)  { return []byte(`{"base":"main","branches":[]}`), nil }
func (f *fakeSource) Plan(string) ([]byte, error) { return nil, ErrUnavailable }
func (f *fakeSource) Commits([]string) (map[string]string, error) {
	return map[string]string{"f_1": "abcdef0123"}, nil
}
func (f *fakeSource) Head() (string, error) { f.mu.Lock(); defer f.mu.Unlock(); return f.head, nil }

const fakeRoom = `{"head":"h1","clock":1,"peers":[{"tool":"a:1","state":"active","last_seen":"2026-01-05T09:00:00.000Z"}],
"claims":[{"id":"f_c","tool":"a:1","scopes":["file:x"],"access":"exclusive","subject":"<img src=x onerror=alert(1)>",
"at":"2026-01-05T09:00:00.000Z","lease_expires_at":"2026-01-05T09:30:00.000Z","lease_state":"expired","owner_state":"idle","contested":true}],
"handoffs":[],"blockers":[],"risks":[],"worktrees":[],
"sessions":[{"session":"codex-01","tool":"codex:01","agent":"codex","state":"live","worktree":"/r/.rally/worktrees/codex-01"}],"totals":{"facts":1,"retracted":0,"by_kind":{"claim":1}}}`

func start(t *testing.T) (*fakeSource, string, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{head: "h1", room: fakeRoom}
	s, err := New(ln, Options{Source: src, Token: "tok", Watcher: &PollWatcher{Head: src.Head, Interval: 10 * time.Millisecond},
		Now: func() time.Time { return time.Date(2026, 1, 5, 9, 40, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return src, "http://" + ln.Addr().String(), ln.Addr().String()
}

func get(t *testing.T, url string, hdr map[string]string, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestGuard(t *testing.T) {
	_, base, addr := start(t)
	_, port, _ := net.SplitHostPort(addr)
	for _, c := range []struct {
		name, url, host string
		hdr             map[string]string
		want            int
	}{
		{"no token", base + "/", "", nil, 403},
		{"no token on an asset", base + "/static/app.js", "", nil, 403},
		{"wrong token", base + "/api/room?token=tik", "", nil, 403},
		{"token in a header", base + "/api/room", "", map[string]string{"X-Rally-Token": "tok"}, 200},
		{"rebinding Host", base + "/?token=tok", "attacker.example:" + port, nil, 403},
		{"Host on another port", base + "/?token=tok", "127.0.0.1:1", nil, 403},
		{"localhost Host", base + "/?token=tok", "localhost:" + port, nil, 200},
		{"foreign Origin", base + "/api/room?token=tok", "", map[string]string{"Origin": "http://attacker.example"}, 403},
		{"own Origin", base + "/api/room?token=tok", "", map[string]string{"Origin": "http://" + addr}, 200},
		{"cross-site fetch", base + "/api/room?token=tok", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"page", base + "/?token=tok", "", nil, 200},
		{"history", base + "/history?token=tok", "", nil, 200},
		{"plan unavailable", base + "/api/plan?token=tok", "", nil, 501},
	} {
		if got, body := get(t, c.url, c.hdr, c.host); got != c.want {
			t.Errorf("%s: %d, want %d\n%s", c.name, got, c.want, body)
		}
	}
	req, _ := http.NewRequest("POST", base+"/api/room?token=tok", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("POST: %d, want 403", resp.StatusCode)
	}
}

func TestPagesEscapePeerText(t *testing.T) {
	_, base, _ := start(t)
	_, room := get(t, base+"/?token=tok", nil, "")
	if strings.Contains(room, "<img") || !strings.Contains(room, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("room page does not escape the claim's subject:\n%s", room)
	}
	for _, want := range []string{`class="mark expired"`, `class="mark contested"`, "still blocks", "codex-01", "live"} {
		if !strings.Contains(room, want) {
			t.Errorf("room page lacks %s", want)
		}
	}
	_, hist := get(t, base+"/history?token=tok&part=main", nil, "")
	if strings.Contains(hist, "<script>") || !strings.Contains(hist, "&lt;script&gt;") {
		t.Errorf("history does not escape the subject:\n%s", hist)
	}
	if !strings.Contains(hist, `class="fact kind-note retracted"`) || !strings.Contains(hist, "abcdef0") {
		t.Errorf("history lacks the retraction mark or the commit id:\n%s", hist)
	}
	if strings.Contains(hist, "<html") {
		t.Error("part=main returned the whole page")
	}
}

func TestEventsFollowTheHead(t *testing.T) {
	src, base, _ := start(t)
	req, _ := http.NewRequest("GET", base+"/events?token=tok", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	next := func() string {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, "data: ") {
				return strings.TrimSpace(strings.TrimPrefix(line, "data: "))
			}
		}
	}
	if h := next(); h != "h1" {
		t.Fatalf("first event %q, want h1", h)
	}
	src.mu.Lock()
	src.head = "h2"
	src.mu.Unlock()
	if h := next(); h != "h2" {
		t.Fatalf("next event %q, want h2", h)
	}
}

func TestPageShowsLeadFreezeSubjectsAndRejections(t *testing.T) {
	src, base, _ := start(t)
	src.mu.Lock()
	src.room = `{"head":"h2","clock":3,"lead":"a:1",
"peers":[{"tool":"a:1","state":"active","last_seen":"2026-01-05T09:00:00.000Z","subject":"<b>cutting</b> the release"},
{"tool":"b:2","state":"idle","last_seen":"2026-01-05T09:00:00.000Z","subject":"building the API"}],
"claims":[],"handoffs":[{"id":"f_h","from":"a:1","target":"b:2","subject":"port it","at":"2026-01-05T09:00:00.000Z","state":"rejected","reason":"not my area"}],
"blockers":[{"id":"f_b","kind":"blocker","tool":"a:1","subject":"release 1.2","at":"2026-01-05T09:00:00.000Z"},
{"id":"f_s","kind":"blocker","tool":"b:2","subject":"scoped","scopes":["dir:x"],"at":"2026-01-05T09:00:00.000Z"}],
"risks":[],"worktrees":[],"sessions":[],"totals":{"facts":3,"retracted":0,"by_kind":{}}}`
	src.mu.Unlock()
	_, room := get(t, base+"/?token=tok", nil, "")
	for _, want := range []string{`lead <span class="tool lead">a:1</span>`, `<span class="badge lead">lead</span>`,
		"&lt;b&gt;cutting&lt;/b&gt; the release", "building the API", "rejected: not my area", "room frozen by the lead"} {
		if !strings.Contains(room, want) {
			t.Errorf("room page lacks %s", want)
		}
	}
	if n := strings.Count(room, "room frozen by the lead"); n != 1 {
		t.Errorf("%d blockers shown as a freeze, want 1 (the lead's unscoped one)", n)
	}
	src.mu.Lock()
	src.room = fakeRoom
	src.mu.Unlock()
	if _, room := get(t, base+"/?token=tok", nil, ""); !strings.Contains(room, "no lead") {
		t.Error("a room without a lead does not say so")
	}
}
