package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/git-rally/git-rally/hooks"
)

// reviewRoom is a small shop's repository with two managed agents, a
// third agent in the main checkout and a plan: the room the docs'
// screenshots show. It returns the repository and the stand-in terminal.
func reviewRoom(t *testing.T) (string, *fakeTerminal) {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "shop")
	files := map[string]string{
		"src/api.ts": `import { cart } from "./cart";
const LIMIT = 0;
export function routes(app) {
  app.get("/ping", () => "pong");
  app.get("/cart", (req) => cart(req.user));
}
`,
		"src/cart.ts": `export function cart(user) {
  return { user, items: [] };
}
`,
		"README.md": "# shop\n\nThe shop's API.\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(repo, filepath.Dir(p)), 0o777); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(repo, p), []byte(c), 0o666)
	}
	gitT(t, repo, "init", "-q", "-b", "main")
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-q", "-m", "the shop's API")
	t.Chdir(repo)
	t.Setenv("RALLY_AUTOPACK", "0")
	rallyT(t, "init")
	term := newFakeTerminal()
	demoTerminal = term
	t.Cleanup(func() { demoTerminal = nil })
	rallyT(t, "run", "aider", "--name", "api", "--command-json", `["aider","--model","sonnet"]`)
	rallyT(t, "run", "goose", "--name", "web", "--command-json", `["goose","session"]`)
	// What the agents do, each as its session.
	as := func(session string, args ...string) {
		t.Setenv("RALLY_SESSION", session)
		rallyT(t, args...)
		t.Setenv("RALLY_SESSION", "")
	}
	as("aider-api-01", "claim", "src/ratelimit.ts", "--tool", "aider:api-01", "--subject", "the limiter")
	as("goose-web-01", "claim", "src/cart.ts", "--tool", "goose:web-01", "--subject", "totals")
	rallyT(t, "enter", "--tool", "claude_code:docs-1", "--subject", "the API guide")
	rallyT(t, "claim", "docs/", "--tool", "claude_code:docs-1", "--subject", "rate limits in the guide")
	plan := `{"id": "checkout-v2", "goal": "a faster checkout", "tasks": [
		{"id": "limits", "goal": "rate-limit the API", "owns": ["dir:src/limits"], "check": "npm test -- limits"},
		{"id": "totals", "goal": "cart totals", "owns": ["dir:src/totals"], "depends_on": ["limits"]},
		{"id": "guide", "goal": "document the limits", "owns": ["dir:guide"]}]}`
	pf := filepath.Join(t.TempDir(), "checkout-v2.json")
	os.WriteFile(pf, []byte(plan), 0o666)
	rallyT(t, "plan", "start", pf, "--tool", "claude_code:docs-1")
	as("aider-api-01", "plan", "take", "limits", "--tool", "aider:api-01")
	// What the stand-in terminals show: what each agent printed so far.
	term.mu.Lock()
	term.screens["rally-aider-api-01"] = strings.Split("aider v0.86 · model sonnet · git repo .rally/worktrees/aider-api-01\n"+
		"> add a rate limit to every route\nEditing src/api.ts\nAdded src/ratelimit.ts\nCommit 1f3c2ab: rate-limit the API\n> ", "\n")
	term.screens["rally-goose-web-01"] = strings.Split("starting session | provider: anthropic\n"+
		"( O)> show the cart total on the page\nreading src/api.ts\nwriting src/api.ts\nwriting src/totals.ts\n( O)> ", "\n")
	term.mu.Unlock()
	return repo, term
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Ana", "-c", "user.email=ana@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitIn commits files in a worktree and runs rally's post-commit hook
// there, as git would (in-process: this test has no git-rally on PATH).
func commitIn(t *testing.T, wt, msg string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		os.MkdirAll(filepath.Join(wt, filepath.Dir(p)), 0o777)
		if err := os.WriteFile(filepath.Join(wt, p), []byte(c), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, wt, "add", "-A")
	gitT(t, wt, "commit", "-q", "-m", msg)
	ans := hooks.Handle(hooks.Invocation{Host: hooks.Git, Event: "post-commit", Dir: wt, Now: time.Now().UTC(), Getenv: os.Getenv})
	if ans.Code != 0 {
		t.Fatalf("post-commit: %d %s", ans.Code, ans.Stderr)
	}
	t.Logf("post-commit in %s: %s", filepath.Base(wt), ans.Stderr)
}

// TestServeReviewInBrowser is the review loop in headless Chromium (SPEC
// §16): both agents' diffs on the page, their conflict shown when the
// second commit makes it, a comment on line 2 of one diff becomes one
// handoff that reaches the agent's terminal with the path and the line,
// and the agent's receipt shows "acknowledged" beside it. Then a forged
// cross-origin form writes nothing, hostile text in a diff and a comment
// renders as text, and a narrow window scrolls the claims table. With
// -update-screenshots it writes the docs' screenshots of this room.
func TestServeReviewInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: the browser test is slow; run it without -short")
	}
	browser := chromium(t)
	docs, err := filepath.Abs(filepath.Join("..", "..", "..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	repo, term := reviewRoom(t)
	aiderWT := filepath.Join(repo, ".rally", "worktrees", "aider-api-01")
	gooseWT := filepath.Join(repo, ".rally", "worktrees", "goose-web-01")
	commitIn(t, aiderWT, "rate-limit the API", map[string]string{
		"src/api.ts": `import { cart } from "./cart";
import { limit } from "./ratelimit";
const LIMIT = 100;
export function routes(app) {
  app.use(limit(LIMIT));
  app.get("/ping", () => "pong");
  app.get("/cart", (req) => cart(req.user));
}
`,
		"src/ratelimit.ts": `export function limit(perMinute) {
  const seen = new Map();
  return (req, next) => {
    const n = (seen.get(req.ip) || 0) + 1;
    seen.set(req.ip, n);
    return n > perMinute ? { status: 429 } : next();
  };
}
`})

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		f := newFactory(strings.NewReader(""), io.Discard, io.Discard)
		f.server = testServer
		defer f.Close()
		f.ToolFlag = "human:ana"
		done <- runServe(ctx, f, &serveOptions{addr: "127.0.0.1:0"}, func(u string, s WebServer) { urls <- u })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	base := url[:strings.Index(url, "/?token=")]
	token := url[strings.Index(url, "token=")+len("token="):]

	actx, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 900), chromedp.DisableGPU)...)
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
		os.WriteFile(filepath.Join(shots, name), png, 0o666)
		if *updateScreenshots {
			if err := os.WriteFile(filepath.Join(docs, name), png, 0o666); err != nil {
				t.Fatal(err)
			}
		}
	}
	// text reads an element's text in one evaluation: the page replaces
	// its main part when the ledger moves, so a node found in one call may
	// be gone in the next.
	text := func(sel string) string {
		t.Helper()
		q, _ := json.Marshal(sel)
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%s) || {innerText: "<no %s>"}).innerText`, q, strings.Trim(string(q), `"`))))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	waitFor := func(what, sel string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		wctx, wcancel := context.WithTimeout(bctx, within)
		defer wcancel()
		if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
			t.Fatalf("%s (%s) did not show within %v: %v", what, sel, within, err)
		}
		return time.Since(start)
	}
	// waitText waits until the element's text holds want.
	waitText := func(what, sel, want string, within time.Duration) {
		t.Helper()
		q, _ := json.Marshal(sel)
		w, _ := json.Marshal(want)
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](fmt.Sprintf(`(document.querySelector(%s) || {textContent: ""}).textContent.includes(%s)`, q, w),
			chromedp.WithPollingTimeout(within))); err != nil {
			t.Errorf("%s: %s does not show %q within %v: %v", what, sel, want, within, err)
		}
	}
	ledgerHead := func() string { return gitT(t, repo, "rev-parse", "refs/rally/ledger") }
	aiderCard, gooseCard := `.card[data-branch="rally/aider-api-01"]`, `.card[data-branch="rally/goose-web-01"]`

	// phase: one agent's diff, its terminal, the other's empty branch.
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#live.on"))); err != nil {
		t.Fatalf("room: %v", err)
	}
	waitFor("aider's diff", aiderCard+` tr[data-line="2"]`, 5*time.Second)
	card := text(aiderCard)
	for _, want := range []string{"aider:api-01", "rally/aider-api-01", "src/api.ts", "src/ratelimit.ts", "+11", "import { limit }", "Commit 1f3c2ab"} {
		if !strings.Contains(card, want) {
			t.Errorf("aider's card lacks %q:\n%s", want, card)
		}
	}
	if g := text(gooseCard); !strings.Contains(g, "no commits on rally/goose-web-01") {
		t.Errorf("goose's card before its commit:\n%s", g)
	}
	shoot("review-diff.png")

	// phase: the second commit makes a conflict: it shows on both cards.
	eval(`window.__same = "yes"`)
	commitIn(t, gooseWT, "cart totals", map[string]string{
		"src/api.ts": `import { cart } from "./cart";
import { total } from "./totals";
const LIMIT = 0;
export function routes(app) {
  app.get("/ping", () => "pong");
  app.get("/cart", (req) => cart(req.user));
  app.get("/cart/total", (req) => total(cart(req.user)));
}
`,
		"src/totals.ts": `export function total(c) {
  return c.items.reduce((s, i) => s + i.price * i.qty, 0);
}
`})
	took := waitFor("the conflict", gooseCard+` .conflicts`, 3*time.Second)
	t.Logf("the conflict showed %v after the second commit's hook returned", took.Round(time.Millisecond))
	waitFor("the conflict on aider's card", aiderCard+` .conflicts`, time.Second)
	if c := text(gooseCard + " .conflicts"); !strings.Contains(c, "rally/aider-api-01") || !strings.Contains(c, "aider:api-01") || !strings.Contains(c, "src/api.ts") {
		t.Errorf("goose's conflict line: %q", c)
	}
	// The risk the hook recorded arrives with the ledger's move, the
	// branch's move may come first.
	waitText("the room's risks", "#risks", "overlap-detected: rally/aider-api-01 (aider:api-01) and rally/goose-web-01 (goose:web-01) conflict on src/api.ts", 3*time.Second)
	if eval(`window.__same || ""`) != "yes" {
		t.Error("the page reloaded instead of updating itself")
	}
	shoot("review-conflict.png")

	// phase: a comment on line 2 of aider's diff becomes one handoff.
	before := ledgerHead()
	comment := "Keep the limit configurable: read RATE_LIMIT from the environment instead of hard-coding 100."
	if err := chromedp.Do(bctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('`+aiderCard+` button[data-anchor="src/api.ts:2"]').click(); undefined`),
		chromedp.WaitVisible(chromedp.CSS(aiderCard+" form.comment textarea")),
		chromedp.SendKeys(chromedp.CSS(aiderCard+" form.comment textarea"), comment)); err != nil {
		t.Fatalf("opening the comment form: %v", err)
	}
	shoot("review-writing.png")
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(aiderCard+` form.comment button[type="submit"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor("the comment beside line 2", aiderCard+` tr.rv .review .rv-open`, 3*time.Second)
	hs := handoffsTo(t, "aider:api-01")
	if len(hs) != 1 {
		t.Fatalf("%d handoffs to aider:api-01, want 1: %+v", len(hs), hs)
	}
	h := hs[0]
	rev := gitT(t, repo, "rev-parse", "rally/aider-api-01")
	if h.Tool != "human:ana" || h.Body != comment || strings.Join(h.Files, ",") != "src/api.ts:2" || h.Revision != rev {
		t.Errorf("the handoff: %+v (want by human:ana, files src/api.ts:2, revision %s)", h, rev)
	}
	if n := strings.Count(gitT(t, repo, "log", "--oneline", before+"..refs/rally/ledger"), "\n") + 1; n != 2 {
		t.Errorf("the comment wrote %d ledger commits, want 2 (the handoff and its delivery)", n)
	}
	screen, _ := term.Capture("rally-aider-api-01", 20)
	if s := strings.Join(screen, "\n"); !strings.Contains(s, "handoff "+h.ID+" from human:ana") || !strings.Contains(s, "src/api.ts:2") ||
		!strings.Contains(s, "RATE_LIMIT") || !strings.Contains(s, "revision: "+rev) {
		t.Errorf("the agent's terminal did not get the comment with its path and line:\n%s", s)
	}
	waitText("the terminal on the page", aiderCard+" pre.term", "git rally receipt "+h.ID, 3*time.Second)
	shoot("review-comment.png")

	// phase: the agent acknowledges it; the comment says so.
	t.Setenv("RALLY_SESSION", "aider-api-01") // the agent answers from its session
	rallyT(t, "receipt", h.ID, "--tool", "aider:api-01", "--subject", "on it: RATE_LIMIT from the environment, 100 by default")
	t.Setenv("RALLY_SESSION", "")
	waitFor("acknowledged beside the comment", aiderCard+` tr.rv .review[data-id="`+h.ID+`"] .rv-acknowledged`, 3*time.Second)
	if a := text(aiderCard + ` .review[data-id="` + h.ID + `"] .answer`); !strings.Contains(a, "receipt") || !strings.Contains(a, "on it: RATE_LIMIT") {
		t.Errorf("the answer does not link back: %q", a)
	}
	shoot("review-acknowledged.png")
	shoot("room.png")
	for _, v := range []string{"history", "worktrees", "plans"} {
		if err := chromedp.Do(bctx, chromedp.Navigate(base+"/"+v+"?token="+token), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
			t.Fatalf("%s view: %v", v, err)
		}
		shoot(v + ".png")
	}

	// phase: a narrow window; the claims table scrolls, nothing is cut.
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(420, 900), chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#live.on"))); err != nil {
		t.Fatal(err)
	}
	if got := eval(`(() => { const s = document.querySelector("#claims .scroll");
		return [s.scrollWidth > s.clientWidth, document.querySelectorAll("#claims th").length,
			document.documentElement.scrollWidth <= window.innerWidth].join(","); })()`); got != "true,5,true" {
		t.Errorf("narrow window: claims scroll, columns, page fits = %s, want true,5,true", got)
	}
	shoot("room-narrow.png")
	if err := chromedp.Do(bctx, chromedp.EmulateReset()); err != nil {
		t.Fatal(err)
	}

	// phase: a forged cross-origin form and fetch write nothing, even
	// with the URL's token.
	before = ledgerHead()
	evil := evilSite(t, base+"/api/handoff?token="+token)
	if err := chromedp.Do(bctx, chromedp.Navigate(evil), chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
		t.Fatalf("the forging page: %v", err)
	}
	if r := text("#done"); !strings.Contains(r, "fetch") {
		t.Errorf("the forging page did not try both: %q", r)
	}
	if after := ledgerHead(); after != before {
		t.Errorf("a forged cross-origin request wrote to the ledger (%s -> %s)", before, after)
	}
	if hs := handoffsTo(t, "aider:api-01"); len(hs) != 1 {
		t.Errorf("forged handoffs were recorded: %d", len(hs))
	}

	// phase: hostile text in a diff and in a comment renders as text.
	commitIn(t, gooseWT, "hostile", map[string]string{"src/evil.ts": "<script>window.__pwned=1</script>\n<img src=x onerror=\"window.__pwned=2\">\n"})
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(gooseCard+` .file[data-path="src/evil.ts"]`))); err != nil {
		t.Fatal(err)
	}
	hostile := `<img src=x onerror="window.__pwned=3"><script>window.__pwned=4</script>`
	if err := chromedp.Do(bctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('`+gooseCard+` button[data-anchor="src/evil.ts:1"]').click(); undefined`),
		chromedp.SendKeys(chromedp.CSS(gooseCard+" form.comment textarea"), hostile),
		chromedp.Click(chromedp.CSS(gooseCard+` form.comment button[type="submit"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor("the hostile comment", gooseCard+` tr.rv .review`, 3*time.Second)
	if got := eval(`String(window.__pwned || 0) + "," + document.querySelectorAll("main img, main script").length`); got != "0,0" {
		t.Errorf("hostile text ran or became markup: pwned, elements = %s", got)
	}
	if s := text(gooseCard); !strings.Contains(s, "<script>window.__pwned=1</script>") || !strings.Contains(s, hostile) {
		t.Errorf("hostile text is not shown as text:\n%s", s)
	}
	t.Logf("screenshots in %s", shots)
	cancel()
	<-done
}

type handoffFact struct {
	ID, Tool, Target, Body, Revision string
	Files                            []string
}

func handoffsTo(t *testing.T, target string) []handoffFact {
	t.Helper()
	var all, out []handoffFact
	if err := json.Unmarshal([]byte(rallyT(t, "log", "--kind", "handoff", "--json")), &all); err != nil {
		t.Fatal(err)
	}
	for _, h := range all {
		if h.Target == target {
			out = append(out, h)
		}
	}
	return out
}

// evilSite serves, on another loopback port (another origin), a page that
// posts a handoff to target with a form and with fetch, then says so in
// #done.
func evilSite(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"target":"aider:api-01","subject":"forged","body":"forged","files":[],"revision":""}`
	page := fmt.Sprintf(`<!doctype html><html><body>
<form id="f" method="post" action=%q enctype="text/plain" target="sink"><input type="hidden" name=%q value=%q></form>
<iframe name="sink" id="sink"></iframe>
<script>
var tries = [], submitted = false;
document.getElementById("sink").addEventListener("load", function () {
  if (!submitted || tries.indexOf("form") >= 0) return;
  tries.push("form");
  fetch(%q, {method: "POST", mode: "no-cors", body: %q, headers: {"Content-Type": "text/plain"}})
    .catch(function () {})
    .then(function () { tries.push("fetch"); var d = document.createElement("p"); d.id = "done"; d.textContent = tries.join(","); document.body.append(d); });
});
submitted = true;
document.getElementById("f").submit();
</script></body></html>`, target, body[:len(body)-1]+`,"x":"`, `"}`, target, body)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}
