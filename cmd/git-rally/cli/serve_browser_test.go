package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/git-rally/git-rally/web"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the browser test's screenshots into docs/")

// chromium finds the browser the test drives. CI installs Debian's
// chromium, so there a missing browser fails instead of skipping.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("SKIP: no chromium on PATH (apt-get install chromium); the web room is not tested in a browser")
	return ""
}

// rallyT runs one command in-process in the current directory.
func rallyT(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("git rally %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

func firstField(s string) string {
	if fs := strings.Fields(s); len(fs) > 0 {
		return fs[0]
	}
	return ""
}

func TestServeInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: the browser test is slow; run it without -short")
	}
	browser := chromium(t)
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Chdir(repo)
	t.Setenv("RALLY_AUTOPACK", "0")
	const hostile = `<img src=x onerror="window.__pwned=1">`
	rallyT(t, "init")
	rallyT(t, "enter", "--tool", "claude_code:impl-1", "--subject", "building the API")
	rallyT(t, "enter", "--tool", "codex:verify-1", "--subject", "writing tests")
	rallyT(t, "claim", "src/api.ts", "--tool", "claude_code:impl-1", "--subject", "the ping endpoint")
	rallyT(t, "claim", "docs/", "--tool", "codex:verify-1", "--subject", hostile)
	h1 := firstField(rallyT(t, "handoff", "--tool", "claude_code:impl-1", "--target", "codex:verify-1", "--subject", "test the ping endpoint", "--ack-within", "30m"))
	firstField(rallyT(t, "handoff", "--tool", "codex:verify-1", "--target", "claude_code:impl-1", "--subject", "review the tests"))
	rallyT(t, "receipt", h1, "--tool", "codex:verify-1")
	rallyT(t, "risk", "--tool", "codex:verify-1", "--subject", "the API has no rate limit")
	plan := `{"id": "checkout-v2", "goal": "new checkout flow", "tasks": [
		{"id": "pay", "goal": "the payment API", "owns": ["dir:lib/pay"], "check": "go test ./lib/pay/..."},
		{"id": "page", "goal": "the checkout page", "owns": ["dir:web/checkout"], "depends_on": ["pay"]},
		{"id": "guide", "goal": "the user guide", "owns": ["dir:guide"]}]}`
	if err := os.WriteFile(filepath.Join(repo, "plan.json"), []byte(plan), 0o666); err != nil {
		t.Fatal(err)
	}
	rallyT(t, "plan", "start", "plan.json", "--tool", "claude_code:impl-1")
	rallyT(t, "plan", "take", "pay", "--tool", "codex:verify-1")
	rallyT(t, "worktree", "add", "impl-1", "--tool", "claude_code:impl-1")
	// A managed session, in the demo's stand-in terminal (no tmux), and a
	// handoff delivered into it.
	demoTerminal = newFakeTerminal()
	defer func() { demoTerminal = nil }()
	rallyT(t, "run", "codex", "--name", "rev", "--command-json", `["fake-agent"]`)
	rallyT(t, "status", "idle", "--tool", "codex:rev-01") // it waits at its prompt: rally may paste
	if out := rallyT(t, "handoff", "--tool", "claude_code:impl-1", "--target", "codex:rev-01", "--subject", "review the endpoint"); !strings.Contains(out, "delivered to session codex-rev-01") {
		t.Fatalf("the handoff to the managed session was not delivered:\n%s", out)
	}
	wt := filepath.Join(repo, ".rally", "worktrees", "impl-1")
	if err := os.MkdirAll(filepath.Join(wt, "src"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt, "src", "api.ts"), []byte("export const ping = () => 'pong';\n"), 0o666)
	for _, args := range [][]string{{"add", "src/api.ts"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "ping"}} {
		if out, err := exec.Command("git", append([]string{"-C", wt}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	note := firstField(rallyT(t, "note", "--tool", "codex:verify-1", "--subject", "the server listens on 3000"))
	rallyT(t, "retract", note, "--tool", "codex:verify-1", "--reason", "it is 8080")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	urls := make(chan string, 1)
	var srv *web.Server
	done := make(chan error, 1)
	go func() {
		f := newFactory(strings.NewReader(""), io.Discard, io.Discard)
		f.server = testServer
		defer f.Close()
		done <- runServe(ctx, f, &serveOptions{addr: "127.0.0.1:0"}, func(u string, s WebServer) { srv = s.(*web.Server); urls <- u })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	base := url[:strings.Index(url, "/?token=")]
	token := url[strings.Index(url, "token=")+len("token="):]

	// The guard, seen from a plain client.
	status := func(method, u string, hdr map[string]string, host string) int {
		req, _ := http.NewRequest(method, u, nil)
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
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name, method, url, host string
		hdr                     map[string]string
		want                    int
	}{
		{"no token", "GET", base + "/", "", nil, 403},
		{"no token, api", "GET", base + "/api/room", "", nil, 403},
		{"wrong token", "GET", base + "/api/room?token=" + strings.Repeat("0", len(token)), "", nil, 403},
		{"foreign Host", "GET", url, "rebind.example:80", nil, 403},
		{"foreign Origin", "GET", url, "", map[string]string{"Origin": "http://evil.example"}, 403},
		{"write", "POST", base + "/api/room?token=" + token, "", nil, 403},
		{"the page", "GET", url, "", nil, 200},
		{"the room's JSON", "GET", base + "/api/room?token=" + token, "", nil, 200},
		{"the plan's JSON", "GET", base + "/api/plan?token=" + token, "", nil, 200},
		{"an unknown plan", "GET", base + "/api/plan?plan=nope&token=" + token, "", nil, 400},
		{"the log's JSON", "GET", base + "/api/log?kind=claim&token=" + token, "", nil, 200},
		{"the worktree plan's JSON", "GET", base + "/api/worktrees?token=" + token, "", nil, 200},
	} {
		if got := status(c.method, c.url, c.hdr, c.host); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	// First load: the page and its two assets.
	weight := 0
	for _, p := range []string{"/?token=", "/static/app.css?token=", "/static/app.js?token="} {
		resp, err := http.Get(base + p + token)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		weight += len(b)
	}
	if weight > 200<<10 {
		t.Errorf("first load is %d bytes, over 200 KB", weight)
	}
	t.Logf("first load: %d bytes", weight)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 860), chromedp.DisableGPU)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	shots := t.TempDir()
	shoot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		// Kept beside the test only: this room holds test payloads. The
		// docs' screenshots come from TestServeReviewInBrowser's room.
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	eval := func(expr string, opts ...chromedp.EvaluateOption) int {
		t.Helper()
		n, err := chromedp.Run(bctx, chromedp.Evaluate[int](expr, opts...))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return n
	}

	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#live.on"))); err != nil {
		t.Fatalf("room view: %v", err)
	}
	claims, handoffs, risks := text("#claims"), text("#handoffs"), text("#risks")
	for _, want := range []string{"file:src/api.ts", "claude_code:impl-1", "dir:docs", hostile} {
		if !strings.Contains(claims, want) {
			t.Errorf("claims section lacks %q:\n%s", want, claims)
		}
	}
	for _, want := range []string{"test the ping endpoint", "acknowledged", "review the tests", "open", "review the endpoint", "delivered"} {
		if !strings.Contains(handoffs, want) {
			t.Errorf("handoffs section lacks %q:\n%s", want, handoffs)
		}
	}
	if s := text("#sessions"); !strings.Contains(s, "codex-rev-01") || !strings.Contains(s, "live") {
		t.Errorf("sessions section lacks the managed session:\n%s", s)
	}
	if !strings.Contains(risks, "the API has no rate limit") {
		t.Errorf("risks section lacks the risk:\n%s", risks)
	}
	if pwned, imgs := eval(`window.__pwned ? 1 : 0`), eval(`document.querySelectorAll("main img").length`); pwned != 0 || imgs != 0 {
		t.Errorf("the hostile subject ran or rendered as markup: pwned=%d, <img> elements=%d", pwned, imgs)
	}
	shoot("room.png")

	// An idle page costs its one event stream and nothing else.
	before := srv.Served.Load()
	time.Sleep(1500 * time.Millisecond)
	if n := srv.Served.Load() - before; n != 0 {
		t.Errorf("an idle page made %d requests in 1.5 s, want none beyond its event stream", n)
	}

	// A new claim shows without a reload, within 2 s.
	eval(`window.__sameDocument = 7`)
	id := firstField(rallyT(t, "claim", "port:8080", "--tool", "codex:verify-1", "--subject", "dev server"))
	landed := time.Now()
	wctx, wcancel := context.WithTimeout(bctx, 2*time.Second)
	err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+id+`"]`)))
	wcancel()
	if err != nil {
		t.Fatalf("the new claim %s did not appear within 2 s: %v", id, err)
	}
	t.Logf("new claim shown %v after it landed", time.Since(landed).Round(time.Millisecond))
	if m := eval(`window.__sameDocument || 0`); m != 7 {
		t.Errorf("the page reloaded instead of updating itself (marker %d)", m)
	}
	shoot("room.png")

	// The history strikes the retracted note through.
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/history?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`li.retracted[data-id="`+note+`"]`))); err != nil {
		t.Fatalf("history view: %v", err)
	}
	deco, err := chromedp.Run(bctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('li.retracted[data-id="`+note+`"] .what')).textDecorationLine`))
	if err != nil || deco != "line-through" {
		t.Errorf("retracted note is decorated %q (%v), want line-through", deco, err)
	}
	if h := text(".timeline"); !strings.Contains(h, "the server listens on 3000") || !strings.Contains(h, "retract") {
		t.Errorf("history lacks the note or its retraction:\n%s", h)
	}
	shoot("history.png")
	if st := eval(`fetch("/api/room").then(r => r.status)`, chromedp.EvalAwaitPromise); st != 403 {
		t.Errorf("a fetch without the token got %d, want 403", st)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/plans?token="+token),
		chromedp.WaitVisible(chromedp.CSS(`.col-taken .task[data-task="pay"]`))); err != nil {
		t.Fatalf("plans view: the taken task is not in the taken column: %v", err)
	}
	if b := text(".board"); !strings.Contains(b, "checkout-v2") || !strings.Contains(b, "waits on pay") || !strings.Contains(b, "codex:verify-1") {
		t.Errorf("the board lacks the plan, a waiting task or the taker:\n%s", b)
	}
	for _, v := range []string{"worktrees", "plans"} {
		if err := chromedp.Do(bctx, chromedp.Navigate(base+"/"+v+"?token="+token), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
			t.Fatalf("%s view: %v", v, err)
		}
		shoot(v + ".png")
	}
	t.Logf("screenshots in %s", shots)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("serve did not stop when its context ended")
	}
}

func TestDemoServeInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: the browser test is slow; run it without -short")
	}
	browser := chromium(t)
	docs, err := filepath.Abs(filepath.Join("..", "..", "..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		f := newFactory(strings.NewReader(""), io.Discard, io.Discard)
		f.server = testServer
		done <- serveDemo(ctx, f, "127.0.0.1:0", &jsonFlags{}, func(u string, _ WebServer) { urls <- u })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("demo --serve: %v", err)
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 860), chromedp.DisableGPU)...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	// The choices come from the controls; the first step is the set-up.
	if err := chromedp.Do(bctx, chromedp.Navigate(url),
		chromedp.SetValue(chromedp.CSS(`select[name="agents"]`), "3"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name="overlap"]').checked = true;
			document.querySelector('input[name="handoff"]').checked = false;
			document.querySelector('input[name="time-passes"]').checked = true; undefined`),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="time-passes"][checked]`))); err != nil {
		t.Fatalf("runner: %v", err)
	}
	if s := text(".stepper"); !strings.Contains(s, "step 1 of") || !strings.Contains(s, "pause") {
		t.Fatalf("runner starts at %q, playing", s)
	}
	// Paused ("pause" drops play=1 from the URL), it stays at a step until
	// "next fact". Step 1 paused, whether or not play moved on already.
	paused, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(function(){var u = new URL(document.querySelector(".stepper a.play").href);
		u.searchParams.set("step", "1"); return u.href})()`))
	if err != nil || strings.Contains(paused, "play=") {
		t.Fatalf("the pause link: %q %v", paused, err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(paused), chromedp.WaitVisible(chromedp.CSS(`.stepper a.play[href*="play=1"]`))); err != nil {
		t.Fatalf("pause: %v", err)
	}
	// Step by step with "next fact": the room after each step is shown.
	for i := 0; i < 11; i++ {
		next, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('a[rel="next"]').href`))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(bctx, chromedp.Navigate(next), chromedp.WaitVisible(chromedp.CSS(".stepper"))); err != nil {
			t.Fatal(err)
		}
	}
	if s := text(".stepper"); !strings.Contains(s, "step 12 of") {
		t.Errorf("after 11 clicks on next: %q", s)
	}
	if s := text(".cmd"); !strings.Contains(s, "git rally claim src/api.ts") {
		t.Errorf("step 12 is %q, want the refused claim", s)
	}
	if s := text("#claims"); !strings.Contains(s, "file:src/api.ts") || !strings.Contains(s, "port:8080") {
		t.Errorf("the room after step 12 lacks the claims:\n%s", s)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(t.TempDir(), "runner.png"), png, 0o666)
	if *updateScreenshots {
		if err := os.WriteFile(filepath.Join(docs, "runner.png"), png, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	runnerPlays(t, bctx, text)
	cancel()
	<-done
}

// runnerPlays: each step shows the scenario clock, not "just now";
// "previous" and "next" are disabled at the ends; "play" applies the
// choices and plays the whole scenario, step after step, to its end.
func runnerPlays(t *testing.T, bctx context.Context, text func(string) string) {
	t.Helper()
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	clock12 := text(".stepper .clock")
	if s := text(".stepper"); strings.Contains(s, "just now") || !strings.Contains(clock12, "scenario clock") {
		t.Errorf("step 12's stepper %q, want the scenario clock", s)
	}
	steps := eval(`String(document.querySelectorAll("ol.steps li").length)`)
	go1 := func(step string) {
		t.Helper()
		u := eval(`(function(){var u = new URL(location.href); u.searchParams.delete("play"); u.searchParams.set("step", "` + step + `"); return u.href})()`)
		if err := chromedp.Do(bctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(".stepper"))); err != nil {
			t.Fatal(err)
		}
	}
	go1("1")
	if s := text(".stepper"); !strings.Contains(s, "step 1 of") || strings.Contains(s, "just now") {
		t.Errorf("step 1's stepper %q", s)
	}
	if c := text(".stepper .clock"); c == clock12 {
		t.Errorf("step 1 and step 12 show the same clock %q", c)
	}
	if got := eval(`[document.querySelectorAll('a[rel="prev"]').length, document.querySelectorAll('.stepper [aria-disabled="true"]').length, document.querySelectorAll('a[rel="next"]').length].join()`); got != "0,1,1" {
		t.Errorf("at step 1: a[rel=prev], disabled, a[rel=next] = %s, want 0,1,1", got)
	}
	go1(steps)
	if got := eval(`[document.querySelectorAll('a[rel="prev"]').length, document.querySelectorAll('.stepper [aria-disabled="true"]').length, document.querySelectorAll('a[rel="next"]').length].join()`); got != "1,1,0" {
		t.Errorf("at the last step: a[rel=prev], disabled, a[rel=next] = %s, want 1,1,0", got)
	}
	// The arrow key at the end goes nowhere.
	before := eval(`location.href`)
	if err := chromedp.Do(bctx, chromedp.KeyEvent(kb.ArrowRight), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if after := eval(`location.href`); after != before {
		t.Errorf("ArrowRight at the last step went to %s", after)
	}
	// play: from the controls, the scenario plays by itself from step 1
	// (the form carries play=1 and no step).
	if got := eval(`[document.querySelectorAll('form.choices [name="step"]').length, document.querySelector('form.choices [name="play"]').value].join()`); got != "0,1" {
		t.Errorf("the play form: step inputs, play = %s, want 0,1", got)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(".stepper"))); err != nil {
		t.Fatal(err)
	}
	// The page moves on by itself (a navigation per step): ask it until
	// it is at step 3.
	reached := false
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && !reached; {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(document.querySelector(".stepper") || {}).textContent || ""`))
		reached = err == nil && strings.Contains(s, "step 3 of")
		time.Sleep(100 * time.Millisecond)
	}
	if !reached {
		t.Fatalf("play did not reach step 3 by itself (at %q)", text(".stepper"))
	}
	// ... and it stops at the end: the last step, playing, stays there.
	u := eval(`(function(){var u = new URL(location.href); u.searchParams.set("step", "` + steps + `"); return u.href})()`)
	if err := chromedp.Do(bctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(".stepper")), chromedp.Sleep(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if s := text(".stepper"); !strings.Contains(s, "step "+steps+" of "+steps) || !strings.Contains(s, "played to the end") {
		t.Errorf("playing at the last step: %q", s)
	}
}
