package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// cacheFixture is a ledger with claims, a waiting handoff and an answered
// one, its cache files, and the room it computes from scratch.
type cacheFixture struct {
	c     *clone
	files map[string][]byte // cache file name -> bytes as rally wrote them
	room  string
	now   time.Time
}

func newCacheFixture(tb testing.TB) *cacheFixture {
	tb.Helper()
	now := t0
	_, cs := network(tb, 1, &now)
	c := cs[0]
	l := c.ledger(tb)
	for _, fn := range []facts.AppendFunc{
		facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "a"}, Scopes: []string{"file:src/a.go"}}),
		facts.Simple(&facts.Fact{Kind: facts.KindHandoff, Tool: "a", Target: "b", Subject: "take the parser"}),
		facts.Simple(&facts.Fact{Kind: facts.KindHandoff, Tool: "b", Target: "a", Subject: "review this"}),
		facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "b"}, Scopes: []string{"dir:docs"}}),
		manyClaims("c", compactAt+8), // more than state.bin keeps: a claims file
	} {
		if _, err := l.Append(fn); err != nil {
			tb.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	fx := &cacheFixture{c: c, files: map[string][]byte{}}
	dir := filepath.Join(c.common(), "rally", "cache")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fx.files[e.Name()] = b
	}
	fx.room, fx.now = cacheRoomJSON(tb, c.state(tb), now), now
	return fx
}

// manyClaims appends n claims of tool's, one file each, in one commit.
// openClaimsClone is a one-clone network whose ledger holds open
// claims of "c", its cache settled as a command would find it a minute
// later; now is the clone's clock.
func openClaimsClone(t *testing.T, open int) (*clone, *time.Time) {
	t.Helper()
	now := new(time.Time)
	*now = t0
	_, cs := network(t, 1, now)
	c := cs[0]
	if _, err := c.ledger(t).Append(manyClaims("c", open)); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Minute)
	c.state(t)
	return c, now
}

func manyClaims(tool string, n int) facts.AppendFunc {
	return func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		out := make([]*facts.Fact, n)
		for i := range out {
			out[i] = &facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{fmt.Sprintf("file:many/%d.go", i)}, LeaseS: 1800}
		}
		return out, nil
	}
}

func cacheRoomJSON(tb testing.TB, st *facts.State, now time.Time) string {
	tb.Helper()
	b, err := json.Marshal(st.Room(now))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// restore puts the cache files back as rally wrote them, with name's
// bytes replaced by b.
func (fx *cacheFixture) restore(tb testing.TB, name string, b []byte) {
	dir := filepath.Join(fx.c.common(), "rally", "cache")
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o777)
	for n, data := range fx.files {
		if n == name {
			data = b
		}
		os.WriteFile(filepath.Join(dir, n), data, 0o666)
	}
}

func (fx *cacheFixture) name(prefix string) string {
	for n := range fx.files {
		if strings.HasPrefix(n, prefix) {
			return n
		}
	}
	return ""
}

// Damaged cache files (garbage, truncated, emptied, a byte flipped, an
// older version) are detected and rebuilt: no panic, and the room is the
// one the ledger gives.
func TestDamagedCacheIsRebuilt(t *testing.T) {
	fx := newCacheFixture(t)
	now := fx.now
	for _, prefix := range []string{stateFile, "handoffs-", "claims-", "facts-"} {
		name := fx.name(prefix)
		if name == "" {
			t.Fatalf("no cache file %s*", prefix)
		}
		orig := fx.files[name]
		flipped := append([]byte(nil), orig...)
		flipped[len(flipped)/2] ^= 0x40
		for what, b := range map[string][]byte{
			"garbage":   []byte("\x00\x01garbage\xff"),
			"empty":     nil,
			"truncated": orig[:len(orig)/2],
			"flipped":   flipped,
			"old":       []byte(strings.Replace(string(orig), fmt.Sprintf("rally-cache %d ", cacheVersion), fmt.Sprintf("rally-cache %d ", cacheVersion-1), 1)),
		} {
			fx.restore(t, name, b)
			st := fx.c.state(t)
			if got := cacheRoomJSON(t, st, now); got != fx.room {
				t.Errorf("%s %s: room\n%s\nwant\n%s", name, what, got, fx.room)
			}
			if len(st.Handoffs()) != 2 {
				t.Errorf("%s %s: %d handoffs, want 2", name, what, len(st.Handoffs()))
			}
			all, err := fx.c.ledger(t).All()
			if err != nil || len(all) != 4+compactAt+8 {
				t.Errorf("%s %s: log has %d facts (%v), want %d", name, what, len(all), err, 4+compactAt+8)
			}
		}
	}
}

// FuzzCacheFiles feeds arbitrary bytes to the cache loader in place of
// each cache file.
func FuzzCacheFiles(f *testing.F) {
	fx := newCacheFixture(f)
	for n, b := range fx.files {
		f.Add(uint8(len(n)), b)
		f.Add(uint8(len(n)), b[:len(b)/3])
	}
	names := make([]string, 0, len(fx.files))
	for n := range fx.files {
		names = append(names, n)
	}
	now := fx.now
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		name := names[int(which)%len(names)]
		fx.restore(t, name, b)
		st := fx.c.state(t)
		if got := cacheRoomJSON(t, st, now); got != fx.room {
			t.Fatalf("%s: room\n%s\nwant\n%s", name, got, fx.room)
		}
		if len(st.Handoffs()) != 2 {
			t.Fatalf("%s: %d handoffs, want 2", name, len(st.Handoffs()))
		}
	})
}

// A damaged claims or handoffs file is replaced by the rebuild it causes,
// though the rebuilt one has the same content and so the same name: the
// next command loads the cache instead of rebuilding again.
func TestDamagedNamedFileIsReplaced(t *testing.T) {
	fx := newCacheFixture(t)
	for _, prefix := range []string{"claims-", "handoffs-"} {
		name := fx.name(prefix)
		flipped := append([]byte(nil), fx.files[name]...)
		flipped[len(flipped)-3] ^= 0x40
		fx.restore(t, name, flipped)
		if newCache(fx.c.common()).load() != nil {
			t.Fatalf("%s: a flipped byte was believed", name)
		}
		fx.c.state(t) // rebuilds
		if newCache(fx.c.common()).load() == nil {
			t.Errorf("%s: still damaged after the rebuild", name)
		}
	}
}
