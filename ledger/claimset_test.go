package ledger

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// An append decodes the claims it could overlap and its owner's, not
// every open claim: a claim, its release, another claim and the release
// of a cached claim decode as many cached claims and bytes in a room of
// 400 open claims as in a room of 40, state.bin (but the trees it keeps)
// is as long, and the claims file stays as it was.
func TestAppendCostFlatInOpenClaims(t *testing.T) {
	type cost struct {
		claims, claimBytes int64
		stateBytes         int
	}
	measure := func(open int) cost {
		c, now := openClaimsClone(t, open)
		files := func() []string {
			ms, _ := filepath.Glob(filepath.Join(c.common(), "rally", "cache", "claims-*.bin"))
			return ms
		}
		before := files()
		if len(before) != 1 {
			t.Fatalf("%d open claims: claims files %v, want one", open, before)
		}
		ClaimsDecoded.Store(0)
		ClaimBytesDecoded.Store(0)
		var got cost
		for _, fn := range []facts.AppendFunc{
			facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "x"}, Scopes: []string{"file:many/new.go"}}),
			facts.Release(facts.Owner{Tool: "x"}, nil, []string{"file:many/new.go"}, ""),
			facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "x"}, Scopes: []string{"dir:src"}}),
			facts.Release(facts.Owner{Tool: "c"}, nil, []string{"file:many/7.go"}, ""), // touches one cached claim
		} {
			if _, err := c.ledger(t).Append(fn); err != nil { // a fresh Ledger: a new process
				t.Fatal(err)
			}
			*now = now.Add(time.Second)
			b, err := os.ReadFile(filepath.Join(c.common(), "rally", "cache", stateFile))
			if err != nil {
				t.Fatal(err)
			}
			// The trees of the head path follow the segment's fill, not
			// the claims: they are left out.
			_, trees, ok := decodeCacheFile(b)
			if !ok {
				t.Fatal("state.bin does not decode")
			}
			got.stateBytes = max(got.stateBytes, len(b)-len(trees))
		}
		got.claims, got.claimBytes = ClaimsDecoded.Load(), ClaimBytesDecoded.Load()
		if after := files(); !reflect.DeepEqual(after, before) {
			t.Errorf("%d open claims: the appends rewrote the claims file: %v -> %v", open, before, after)
		}
		if st := c.state(t); st.Claims.Len() != open {
			t.Errorf("%d open claims: %d after a claim, a release, a claim and a release", open, st.Claims.Len())
		}
		return got
	}
	small, large := measure(40), measure(400)
	t.Logf("four appends decode %d claims (%d bytes) and leave %d bytes of state.bin with 40 open claims; %d (%d bytes), %d bytes with 400",
		small.claims, small.claimBytes, small.stateBytes, large.claims, large.claimBytes, large.stateBytes)
	if small.claims != large.claims || small.claimBytes != large.claimBytes {
		t.Errorf("claims decoded by four appends: %d (%d bytes) with 40 open claims, %d (%d bytes) with 400",
			small.claims, small.claimBytes, large.claims, large.claimBytes)
	}
	// Varints of counts and clocks grow with the ledger's length: a few
	// bytes, not a claim's worth (about 200).
	if d := large.stateBytes - small.stateBytes; d < -16 || d > 16 {
		t.Errorf("state.bin after the appends: %d bytes with 40 open claims, %d with 400", small.stateBytes, large.stateBytes)
	}
}

// Near finds every open claim that conflicts with the asked scopes, from
// the claims file and from the changes since, whatever the scopes.
func TestNearFindsEveryConflict(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	pool := []string{"file:a/b.go", "file:a/c.go", "dir:a", "dir:a/b.go", "dir:.", "file:ab/c", "dir:ab",
		"glob:a/*.go", "glob:**/*.go", "glob:a/b*/x", "port:80", "port:8080", "task:p/t1", "service:db", "opaque", "file:z"}
	for trial := 0; trial < 300; trial++ {
		var claims []*facts.Fact
		for i := 0; i < 1+rng.Intn(12); i++ {
			var sc []string
			for j := 0; j < 1+rng.Intn(2); j++ {
				sc = append(sc, pool[rng.Intn(len(pool))])
			}
			claims = append(claims, mk(int64(i+1), i, facts.Fact{Kind: facts.KindClaim, Tool: fmt.Sprint("t", rng.Intn(3)), Scopes: sc}))
		}
		split := rng.Intn(len(claims) + 1)
		base, ok := openClaimBase(encodeClaimBase(append([]*facts.Fact(nil), claims[:split]...)))
		if !ok {
			t.Fatal("claims file does not open")
		}
		cs := facts.ClaimSet{Base: base}
		for _, f := range claims[split:] {
			cs.Put(f)
		}
		var open []*facts.Fact
		for _, f := range claims {
			if rng.Intn(4) == 0 {
				cs.Delete(f.ID)
				continue
			}
			open = append(open, f)
		}
		if cs.Len() != len(open) {
			t.Fatalf("trial %d: %d open claims, want %d", trial, cs.Len(), len(open))
		}
		q := []string{pool[rng.Intn(len(pool))]}
		near := map[string]bool{}
		for _, f := range cs.Near(q) {
			near[f.ID] = true
		}
		for _, f := range open {
			if _, _, hit := facts.ScopesConflict(f.Scopes, facts.Exclusive, q, facts.Exclusive); hit && !near[f.ID] {
				t.Errorf("trial %d: %v conflicts with %v but Near missed it", trial, f.Scopes, q)
			}
			if cs.Get(f.ID) == nil {
				t.Errorf("trial %d: open claim %s not found", trial, f.ID)
			}
		}
		var ids []string
		for _, f := range cs.All() {
			ids = append(ids, f.ID)
		}
		var want []string
		facts.SortFacts(open)
		for _, f := range open {
			want = append(want, f.ID)
		}
		if !reflect.DeepEqual(ids, want) {
			t.Fatalf("trial %d: All %v, want %v", trial, ids, want)
		}
	}
}

// Every field of a Fact but Raw survives the cache's encoding: a field
// added to Fact without a tag in cachecodec.go fails here.
func TestFactCodecCoversEveryField(t *testing.T) {
	var f facts.Fact
	v := reflect.ValueOf(&f).Elem()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if name == "Raw" {
			continue
		}
		switch fv := v.Field(i); fv.Kind() {
		case reflect.String:
			fv.SetString(name + "-value")
		case reflect.Int, reflect.Int64:
			fv.SetInt(int64(i + 1))
		case reflect.Slice:
			fv.Set(reflect.ValueOf([]string{name, "second"}))
		default:
			t.Fatalf("field %s of kind %s: teach the codec and this test", name, fv.Kind())
		}
	}
	var e encoder
	e.fact(&f)
	d := decoder{b: e.b}
	got := d.fact()
	if d.bad || len(d.b) != 0 || !reflect.DeepEqual(got, &f) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, &f)
	}
}

// Bytes that passed the checksum but are not what this version wrote
// decode to "not believed", never to a panic.
func TestCodecNeverPanics(t *testing.T) {
	st := facts.NewState()
	st.Claims.Put(mk(1, 0, facts.Fact{Kind: facts.KindClaim, Tool: "a", Scopes: []string{"file:x"}}))
	st.Peers["a"] = &facts.Peer{Tool: "a", LastAt: "2026-03-01T10:00:00.000Z"}
	var e encoder
	encodeState(&e, st, &cacheFile{})
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 3000; i++ {
		b := append([]byte(nil), e.b[:rng.Intn(len(e.b)+1)]...)
		if len(b) > 0 && rng.Intn(2) == 0 {
			b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
		}
		decodeState(&decoder{b: b})
		decodeHandoffs(b)
		if cb, ok := openClaimBase(b); ok {
			cb.Lookup("ix")
			cb.LookupPrefix("p")
			for j := 0; j < cb.Len() && j < 4; j++ {
				cb.Fact(uint32(j))
			}
			cb.decodeAll()
		}
	}
	keys := sortedKeys(map[string]int{"b": 1, "a": 2})
	if !sort.StringsAreSorted(keys) {
		t.Error("keys not sorted")
	}
}

// BenchmarkOpenClaims reads the room, and appends a claim and its release,
// each through a fresh Ledger (as a new process would), with few and with
// many open claims: go test ./facts -run X -bench OpenClaims.
func BenchmarkOpenClaims(b *testing.B) {
	for _, open := range []int{20, 1619} {
		now := t0
		_, cs := network(b, 1, &now)
		c := cs[0]
		for done := 0; done < open; done += 200 {
			if _, err := c.ledger(b).Append(manyClaims(fmt.Sprint("c", done), min(200, open-done))); err != nil {
				b.Fatal(err)
			}
		}
		c.state(b)
		b.Run(fmt.Sprintf("room/%d", open), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				l := c.ledger(b)
				st, err := l.Read()
				if err != nil {
					b.Fatal(err)
				}
				st.Room(now)
				l.Close()
			}
		})
		b.Run(fmt.Sprintf("claim/%d", open), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p := fmt.Sprintf("file:bench/%d.go", i)
				l := c.ledger(b)
				if _, err := l.Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: "x"}, Scopes: []string{p}})); err != nil {
					b.Fatal(err)
				}
				l.Close()
				b.StopTimer()
				l = c.ledger(b)
				if _, err := l.Append(facts.Release(facts.Owner{Tool: "x"}, nil, []string{p}, "")); err != nil {
					b.Fatal(err)
				}
				l.Close()
				b.StartTimer()
			}
		})
	}
}

// Writers in parallel (each a Ledger of its own, as processes are) cross
// several claims files while readers load the cache; the claims every one
// of them ends with are the ones a rebuild from the ledger finds.
func TestParallelAppendsAcrossClaimsFiles(t *testing.T) {
	now := t0
	_, cs := network(t, 1, &now)
	c := cs[0]
	const writers, each = 3, 24
	done := make(chan error, writers+1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			l, err := Open(c.common(), func() time.Time { return t0 })
			if err == nil {
				_, err = l.Read()
				l.Close()
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	for w := 0; w < writers; w++ {
		go func(w int) {
			tool := fmt.Sprint("w", w)
			for i := 0; i < each; i++ {
				l, err := Open(c.common(), func() time.Time { return t0 })
				if err != nil {
					done <- err
					return
				}
				scope := fmt.Sprintf("file:par/%d/%d.go", w, i)
				if _, err := l.Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: tool}, Scopes: []string{scope}})); err != nil {
					done <- err
					return
				}
				if i%3 == 2 { // release every third
					if _, err := l.Append(facts.Release(facts.Owner{Tool: tool}, nil, []string{scope}, "")); err != nil {
						done <- err
						return
					}
				}
				l.Close()
			}
			done <- nil
		}(w)
	}
	for w := 0; w < writers; w++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ids := func(st *facts.State) []string {
		var out []string
		for _, f := range st.SortedClaims() {
			out = append(out, f.ID)
		}
		return out
	}
	cached := ids(c.state(t))
	if len(cached) != writers*each*2/3 {
		t.Errorf("%d open claims, want %d", len(cached), writers*each*2/3)
	}
	if err := os.RemoveAll(filepath.Join(c.common(), "rally", "cache")); err != nil {
		t.Fatal(err)
	}
	if rebuilt := ids(c.state(t)); !reflect.DeepEqual(cached, rebuilt) {
		t.Errorf("claims from the cache differ from a rebuild:\n%v\n%v", cached, rebuilt)
	}
}
