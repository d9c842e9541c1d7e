package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// signedLedger makes a clone whose ledger holds n notes and claims of
// t:c0 signed by a key the allowed-signers file lists for it, then a
// few unsigned facts in its name, retractions of both kinds, and sets
// rally.requireSigned.
func signedLedger(t *testing.T, n int) (*clone, []*facts.Fact) {
	t.Helper()
	now := t0
	_, cs := network(t, 1, &now)
	a := cs[0]
	dir := t.TempDir()
	key, pub := writeKey(t, dir, "a")
	allowed := filepath.Join(dir, "allowed")
	os.WriteFile(allowed, []byte("t:c0 "+pub), 0o666)
	git(t, a.dir, "config", "rally.sign", "true")
	git(t, a.dir, "config", "user.signingKey", key)
	git(t, a.dir, "config", "gpg.ssh.allowedSignersFile", allowed)
	var out []*facts.Fact
	appendAll := func(fs ...*facts.Fact) []*facts.Fact {
		t.Helper()
		w, err := a.ledger(t).Append(func(*facts.State, time.Time) ([]*facts.Fact, error) { return fs, nil })
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
		out = append(out, w...)
		return w
	}
	for done := 0; done < n; done += 250 {
		var fs []*facts.Fact
		for i := done; i < min(n, done+250); i++ {
			f := &facts.Fact{Kind: facts.KindNote, Tool: "t:c0", Subject: fmt.Sprintf("n %d", i)}
			if i%50 == 0 {
				f = &facts.Fact{Kind: facts.KindClaim, Tool: "t:c0", Scopes: []string{fmt.Sprintf("file:s/%d.go", i)}, Access: facts.Exclusive, LeaseS: 1800}
			}
			fs = append(fs, f)
		}
		appendAll(fs...)
	}
	c1 := appendAll(&facts.Fact{Kind: facts.KindClaim, Tool: "t:c0", Scopes: []string{"file:signed.go"}, Access: facts.Exclusive, LeaseS: 1800})[0]
	c2 := appendAll(&facts.Fact{Kind: facts.KindClaim, Tool: "t:c0", Scopes: []string{"file:kept.go"}, Access: facts.Exclusive, LeaseS: 1800})[0]
	appendAll(&facts.Fact{Kind: facts.KindRetract, Tool: "t:c0", Ref: c1.ID}) // signed: counts
	git(t, a.dir, "config", "rally.sign", "false")
	appendAll(&facts.Fact{Kind: facts.KindClaim, Tool: "t:c0", Scopes: []string{"file:forged.go"}, Access: facts.Exclusive, LeaseS: 1800})
	appendAll(&facts.Fact{Kind: facts.KindRetract, Tool: "t:c0", Ref: c2.ID}) // unsigned: nothing
	appendAll(&facts.Fact{Kind: facts.KindHandoff, Tool: "t:c0", Target: "t:x", Subject: "forged"})
	git(t, a.dir, "config", "rally.requireSigned", "true")
	return a, out
}

// Under rally.requireSigned the projection is Build of the verified
// facts, streamed: the same room, the same facts ignored.
func TestViewIsBuildOfVerified(t *testing.T) {
	a, _ := signedLedger(t, 600)
	l := a.ledger(t)
	v, err := l.Verifier()
	if err != nil {
		t.Fatal(err)
	}
	all, err := l.All()
	if err != nil {
		t.Fatal(err)
	}
	var keep []*facts.Fact
	for _, f := range all {
		if v.Verdict(f.ID, f.Tool) == Verified {
			keep = append(keep, f)
		}
	}
	want := facts.Build(keep)
	st, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	// The totals are the ledger's, every fact counted (as View has them).
	want.Facts, want.Retracted, want.ByKind, want.Bad = st.Facts, st.Retracted, st.ByKind, st.Bad
	got, err := l.View()
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Hour)
	if w, g := roomKey(want.Room(now)), roomKey(got.Room(now)); w != g {
		t.Fatalf("the view's room\n%s\nBuild of the verified facts\n%s", g, w)
	}
	if l.Ignored != len(all)-len(keep) || l.Ignored != 3 {
		t.Fatalf("%d ignored, want %d (3)", l.Ignored, len(all)-len(keep))
	}
	claims := ""
	for _, c := range got.Room(now).Claims {
		claims += c.Fact.Scopes[0] + " "
	}
	if want := "file:kept.go "; len(claims) < len(want) || claims[len(claims)-len(want):] != want {
		t.Fatalf("claims %q: the signed retraction should close signed.go, the forged claim and retraction count for nothing", claims)
	}
}

// The view holds the projection, not the facts: the live heap while it
// streams grows by a few bytes a fact of the history (counted at samples
// every 256 facts, not timed). Every fact decoded and held was over
// 1.5 KB a fact: over 1 GB at a million facts, in every command under
// requireSigned.
func TestViewHoldsNoFactPerFact(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	defer func() { viewSample = nil }()
	peak := func(n int) float64 {
		a, _ := signedLedger(t, n)
		l := a.ledger(t)
		if _, err := l.Verifier(); err != nil { // the verdicts recorded, untimed
			t.Fatal(err)
		}
		if _, err := l.Read(); err != nil {
			t.Fatal(err)
		}
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		before, top := m.HeapAlloc, m.HeapAlloc
		viewSample = func() {
			runtime.GC()
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapAlloc)
		}
		if _, err := l.View(); err != nil {
			t.Fatal(err)
		}
		viewSample = nil
		return float64(top) - float64(before)
	}
	p1, p2 := peak(1000), peak(4000)
	per := (p2 - p1) / 3000
	t.Logf("view: the live heap grew by %.0f bytes at 1,000 facts, %.0f at 4,000: %.0f bytes a fact", p1, p2, per)
	if per > 200 {
		t.Fatalf("the view holds %.0f bytes a fact of the history, want at most 200", per)
	}
}
