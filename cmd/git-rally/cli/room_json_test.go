package cli

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
)

// roomIndentedJSON writes what indentedJSON writes for the same room, for
// rooms whose claims set every field of claimJSON (filled by reflection,
// so a field added to claimJSON and not to appendClaimJSON fails here)
// with strings that need escaping, and for empty and nil lists.
func TestRoomJSONMatchesIndentedJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	strs := []string{"", "a", "file:src/a.go", `q"uote`, `back\slash`, "<b>&amp;</b>", "line\nbreak\ttab\r",
		"\u2028\u2029", "é中文🙂", "\x01\x1f\x7fctl", "\xff\xfeinvalid", "  spaced  ", "[]{}:,", "\b\f"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	fill := func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.String:
				f.SetString(str())
			case reflect.Bool:
				f.SetBool(rng.IntN(2) == 0)
			case reflect.Slice:
				switch rng.IntN(4) {
				case 0: // nil
				case 1:
					f.Set(reflect.MakeSlice(f.Type(), 0, 0))
				default:
					n := 1 + rng.IntN(3)
					s := reflect.MakeSlice(f.Type(), n, n)
					for j := 0; j < n; j++ {
						s.Index(j).SetString(str())
					}
					f.Set(s)
				}
			default:
				t.Fatalf("claimJSON.%s: a %s field; teach appendClaimJSON and this test", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	rooms := []roomJSON{
		{},
		baseRoomJSON(),
	}
	for i := 0; i < 200; i++ {
		r := baseRoomJSON()
		r.Head, r.Clock = str(), rng.Int64N(1<<40)
		n := rng.IntN(5)
		if n == 4 {
			r.Claims = nil
		}
		for j := 0; j < n && n < 4; j++ {
			var c claimJSON
			fill(reflect.ValueOf(&c).Elem())
			r.Claims = append(r.Claims, c)
		}
		if rng.IntN(2) == 0 {
			r.Plans = []roomPlanJSON{{Plan: str(), ByState: map[string]int{str(): 1}}}
		}
		if rng.IntN(2) == 0 {
			r.Peers = append(r.Peers, peerJSON{Tool: str(), State: str(), LastSeen: str(), Verified: str()})
		}
		rooms = append(rooms, r)
	}
	big := baseRoomJSON() // written in many chunks
	for i := 0; i < 600; i++ {
		var c claimJSON
		fill(reflect.ValueOf(&c).Elem())
		big.Claims = append(big.Claims, c)
	}
	rooms = append(rooms, big)
	for _, r := range rooms {
		want, err := cmdutil.IndentedJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeIndented(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("for %#v\n got %s\nwant %s", r, got.Bytes(), want.Bytes())
		}
	}
}

// baseRoomJSON is a room with something in every list but the claims.
func baseRoomJSON() roomJSON {
	return roomJSON{Head: "abc", Clock: 7, Peers: []peerJSON{{Tool: "a", State: "active", LastSeen: "t"}},
		Claims: []claimJSON{}, Handoffs: []handoffJSON{{ID: "h", From: "a", Target: "b", Subject: "s<>", Overdue: true}},
		Blockers: []noteJSON{{ID: "b", Kind: "blocker", Scopes: []string{"file:x"}}}, Risks: []noteJSON{},
		Worktrees: []worktreeJSON{{Name: "w"}}, Sessions: []roomSessionJSON{},
		Totals: totalsJSON{Facts: 3, ByKind: map[string]int{"claim": 2, "note": 1}, Ignored: 1}}
}

// A room whose claims stream from their views writes what toRoomJSON's
// claims write.
func TestRoomJSONStreamMatchesClaims(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	room := &facts.Room{Head: "h", Clock: 3, ByKind: map[string]int{"claim": 2}}
	for i, sub := range []string{"plain", "esc\x1b[31mred\nline", "", "", "again", "more"} {
		room.Claims = append(room.Claims, facts.ClaimView{
			Fact:         &facts.Fact{ID: fmt.Sprintf("f_%d", i), Tool: "t", Session: sub, Scopes: []string{"file:a" + sub}, Subject: sub, At: "x"},
			LeaseExpires: at.Add(time.Duration(i%3/2) * time.Hour), LeaseState: []string{"live", "expired"}[i%4/3], OwnerState: []string{"active", "idle"}[i/3],
			Contested: i == 1, HeldOver: sub})
	}
	for _, r := range []*facts.Room{room, {Head: "empty"}} {
		want, err := cmdutil.IndentedJSON(toRoomJSON(r))
		if err != nil {
			t.Fatal(err)
		}
		out := toRoomJSONWithout(r)
		out.stream = &claimStream{views: r.Claims}
		got, err := encodeIndented(&out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("got %s\nwant %s", got.Bytes(), want.Bytes())
		}
	}
}

// plainWord agrees with the byte-at-a-time test for every byte in every
// position.
func TestPlainWord(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			if got := plainWord(binary.LittleEndian.Uint64(w)); got != plain(byte(c)) {
				t.Fatalf("byte %#x at %d: plainWord %v", c, pos, got)
			}
		}
	}
	for i := 0; i < 100000; i++ {
		var w [8]byte
		all := true
		for j := range w {
			w[j] = byte(rand.IntN(256))
			all = all && plain(w[j])
		}
		if got := plainWord(binary.LittleEndian.Uint64(w[:])); got != all {
			t.Fatalf("%q: plainWord %v, want %v", w, got, all)
		}
	}
}

// Writing a room's claims allocates at most once a claim (its lease time
// as text), whatever their number: no DTO slice, no whole-document buffer.
func TestRoomJSONAllocationsPerClaim(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	allocs := func(n int) float64 {
		room := &facts.Room{Head: "h", ByKind: map[string]int{"claim": n}}
		for i := 0; i < n; i++ {
			room.Claims = append(room.Claims, facts.ClaimView{
				Fact:         &facts.Fact{ID: fmt.Sprintf("f_%016x", i), Tool: "t", Scopes: []string{fmt.Sprintf("file:src/%d.go", i)}, Subject: "work", At: "2026-01-02T03:04:05.000Z"},
				LeaseExpires: at, LeaseState: "live", OwnerState: "active"})
		}
		out := toRoomJSONWithout(room)
		out.stream = &claimStream{views: room.Claims}
		return testing.AllocsPerRun(5, func() {
			if err := writeRoomJSON(io.Discard, &out); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(20), allocs(2000)
	if per := (large - small) / 1980; per > 1.01 {
		t.Errorf("writing a room allocates %.0f times with 20 claims, %.0f with 2,000: %.2f a claim", small, large, per)
	}
}

// Streamed claims whose owners, lease times and states repeat in runs and
// change at random write what toRoomJSON's claims write.
func TestRoomJSONStreamRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	room := &facts.Room{Head: "h"}
	for i := 0; i < 400; i++ {
		room.Claims = append(room.Claims, facts.ClaimView{
			Fact: &facts.Fact{ID: fmt.Sprintf("f_%d", i), Tool: pick("a", "b"), Session: pick("", "s"), Scopes: []string{"file:x"},
				Subject: pick("", "w"), At: "t", Access: pick("", "shared")},
			LeaseExpires: at.Add(time.Duration(rng.IntN(2)) * time.Minute), LeaseState: pick("live", "expired"),
			OwnerState: pick("active", "idle"), Contested: rng.IntN(3) == 0, HeldOver: pick("", "f_0")})
	}
	want, err := cmdutil.IndentedJSON(toRoomJSON(room))
	if err != nil {
		t.Fatal(err)
	}
	out := toRoomJSONWithout(room)
	out.stream = &claimStream{views: room.Claims}
	got, err := encodeIndented(&out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("streamed claims differ from toRoomJSON's")
	}
}
