package delivery

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

func FuzzInert(f *testing.F) {
	for _, s := range []string{"review $(touch m)", "a\nb", "«x»", "é \x1b[31m", "\u202e", "%41", "`x`;&|<>()'\"\\!#*?~{}[]@^"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Inert(s, 4000)
		for i := 0; i < len(out); i++ {
			if !safe(out[i]) && out[i] != '%' {
				t.Fatalf("Inert(%q) holds %q: %q", s, out[i], out)
			}
		}
	})
}

func TestInertKeepsWhatIsSafeAndEncodesTheRest(t *testing.T) {
	for in, want := range map[string]string{
		"review the parser":  "review the parser",
		"review $(touch m)":  "review %24%28touch m%29",
		"a\nb; c":            "a b%3B c",
		"50% done":           "50%25 done",
		"café":               "caf%C3%A9",
		"src/api_v2.go:12-3": "src/api_v2.go:12-3",
	} {
		if got := Inert(in, 100); got != want {
			t.Errorf("Inert(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMessageLineIsOneInertLineStartingWithTheNoOp(t *testing.T) {
	h := &facts.Fact{ID: "f_0123456789abcdef", Kind: facts.KindHandoff, Tool: "codex:x$(id)", Subject: "s`id`", Body: "b\nrm -rf /",
		Files: []string{"a;b"}, Revision: "$(r)"}
	for _, m := range []Message{{Handoff: h, From: "codex:01", To: "claude_code:01"}, {Text: "t|x", From: "codex:01", To: "claude_code:01"}} {
		line := m.Line()
		if !strings.HasPrefix(line, ": git rally ") {
			t.Errorf("does not start with the shell's no-op: %q", line)
		}
		for i := 0; i < len(line); i++ {
			if !safe(line[i]) && line[i] != '%' {
				t.Fatalf("line holds %q: %q", line[i], line)
			}
		}
		if strings.Count(m.Block(), "\n") != len(m.Lines())-1 {
			t.Errorf("peer text added lines: %q", m.Block())
		}
	}
}

func TestQueueHandsEachMessageOverOnce(t *testing.T) {
	common := t.TempDir()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, e := range []Entry{{Handoff: "f_1", From: "codex:01"}, {Handoff: "f_1", From: "codex:01"}, {Text: "hi", From: "codex:01"}} {
		if err := Enqueue(common, "claude-01", e, now); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(Pending(common, "claude-01")); n != 2 {
		t.Fatalf("%d queued, want 2 (a handoff is queued once)", n)
	}
	var mu sync.Mutex
	got := 0
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			es := Take(common, "claude-01")
			mu.Lock()
			got += len(es)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if got != 2 || Waiting(common, "claude-01") {
		t.Errorf("8 takers took %d messages (want 2), waiting %v", got, Waiting(common, "claude-01"))
	}
	text, fs := Handover([]Entry{{Handoff: "f_gone", From: "codex:01"}, {Text: "hi $(x)", From: "codex:01"}}, "claude_code:01", "claude-01",
		func(string) *facts.Fact { return nil })
	if len(fs) != 1 || !strings.Contains(text, "text: hi %24%28x%29") || fs[0].Status != Status || fs[0].Target != "claude_code:01" {
		t.Errorf("handover of a closed handoff and a text: %q %+v", text, fs)
	}
}
