package ledger

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// verdictsAt writes sigs and head under common as a writer would; head
// records all of sigs.
func verdictsAt(t *testing.T, common string, sigs []byte) {
	t.Helper()
	dir := filepath.Join(common, "rally", "verdicts")
	os.MkdirAll(dir, 0o777)
	if err := os.WriteFile(filepath.Join(dir, "sigs"), sigs, 0o666); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "head"), fmt.Appendf(nil, "%040x %d\n", len(sigs), len(sigs)), 0o666)
}

// inMemory is the lookup without a table: every record of sigs read and
// sorted, as each process did before the table.
func inMemory(t *testing.T, common string) *verdictCache {
	t.Helper()
	defer func(n int) { verdictTableAt = n }(verdictTableAt)
	verdictTableAt = 1 << 30
	vc := newVerdictCache(common)
	vc.load(true)
	if vc.tab != nil || vc.head == "" {
		t.Fatal("the in-memory lookup has a table, or no records")
	}
	return vc
}

// A table lookup gives the verdict the in-memory lookup gives, for every
// fact (signed by a listed key, by one listed for another tool, by an
// unlisted one, unsigned, a bad signature, several records an id, ids of
// another form), with records beyond the table, after a block is damaged
// and after sigs was rewritten under it.
func TestVerdictTableAgreesWithMemory(t *testing.T) {
	defer func(a, b int, c int64) { verdictTableAt, verdictBlock, verdictTail = a, b, c }(verdictTableAt, verdictBlock, verdictTail)
	verdictTableAt, verdictBlock = 100, 16
	common := t.TempDir()
	var pubs []string
	for i := 0; i < 3; i++ {
		_, pub := writeKey(t, common, fmt.Sprintf("k%d", i))
		pubs = append(pubs, pub)
	}
	allowed, errs := refs.SSH.ParseAllowedSigners([]byte("t:c0 " + pubs[0] + "t:c1 " + pubs[1]))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rng := rand.New(rand.NewSource(31))
	var ids []string
	for i := 0; i < 1500; i++ {
		ids = append(ids, fmt.Sprintf("f_%016x", rng.Uint64()>>uint(rng.Intn(3)*20)))
	}
	ids = append(ids, "hand-made", "other_form", "f_short")
	nkeys := 0
	lines := func(n int) []byte {
		var b []byte
		for i := 0; i < n; i++ {
			if nkeys < 3 && rng.Intn(200) == 0 {
				b = fmt.Appendf(b, "k %d %s", nkeys, pubs[nkeys])
				nkeys++
			}
			id := ids[rng.Intn(len(ids))]
			switch s := rng.Intn(4); {
			case s == 0:
				b = fmt.Appendf(b, "f %s u\n", id)
			case s == 1:
				b = fmt.Appendf(b, "f %s x\n", id)
			case nkeys > 0:
				b = fmt.Appendf(b, "f %s g %d %d\n", id, rng.Intn(nkeys), 1700000000+rng.Intn(1000))
			}
		}
		return b
	}
	sigs := lines(3000)
	verdictsAt(t, common, sigs)
	tools := []string{"t:c0", "t:c1", "t:c2", facts.SystemTool}
	absent := []string{"f_0000000000000000", "f_ffffffffffffffff", "nothing"}
	compare := func(what string, wantTable bool) {
		t.Helper()
		want := &Verifier{vc: inMemory(t, common), allowed: allowed}
		vc := newVerdictCache(common)
		vc.load()
		if (vc.tab != nil) != wantTable {
			t.Fatalf("%s: table open %v, want %v", what, vc.tab != nil, wantTable)
		}
		got := &Verifier{vc: vc, allowed: allowed}
		counts := map[string]int{}
		for _, id := range append(ids, absent...) {
			for _, tool := range tools {
				w, g := want.Verdict(id, tool), got.Verdict(id, tool)
				if w != g {
					t.Fatalf("%s: %s by %s: %s from the table, %s in memory", what, id, tool, g, w)
				}
				counts[w]++
			}
		}
		if counts[Verified] == 0 || counts[Unsigned] == 0 || counts[BadSig] == 0 {
			t.Fatalf("%s: verdicts %v: not every kind was compared", what, counts)
		}
		vc.reset()
	}
	first := newVerdictCache(common)
	first.load() // the first reader writes the table
	if first.tab != nil || len(first.ents) < 100 {
		t.Fatal("the first reader did not read sigs")
	}
	first.reset()
	compare("table", true)
	// Records beyond the table are read from sigs.
	sigs = append(sigs, lines(300)...)
	verdictsAt(t, common, sigs)
	compare("table and records beyond it", true)
	// Too many beyond it: sigs is read whole and the table written again.
	verdictTail = 100
	compare("records beyond verdictTail", false)
	compare("the table written again", true)
	verdictTail = 256 << 10
	// A damaged block: read again from sigs, the same verdicts.
	tab := filepath.Join(common, "rally", "verdicts", "table")
	data, _ := os.ReadFile(tab)
	data[verdictHeader+len(data)/2] ^= 0xff
	os.WriteFile(tab, data, 0o644)
	compare("a damaged block", true)
	if n, _ := os.ReadFile(tab); string(n) == string(data) {
		t.Fatal("a damaged table was not written again")
	}
	// sigs rewritten (the recorded head gone): the table is not bound to it.
	rng = rand.New(rand.NewSource(32))
	nkeys = 0
	sigs = lines(3300)
	verdictsAt(t, common, sigs)
	compare("sigs rewritten", false)
}

// Over a ledger with signed, unsigned and bad facts (a key listed for
// the fact's tool, one that is not, none), the verifier through the
// table gives each fact the verdict the in-memory lookup gives.
func TestVerdictTableAgreesOnALedger(t *testing.T) {
	defer func(a, b int) { verdictTableAt, verdictBlock = a, b }(verdictTableAt, verdictBlock)
	verdictTableAt, verdictBlock = 4, 2
	now := t0
	_, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	dir := t.TempDir()
	keyA, pubA := writeKey(t, dir, "a")
	keyB, _ := writeKey(t, dir, "b") // listed for no one
	allowed := filepath.Join(dir, "allowed")
	os.WriteFile(allowed, []byte("t:c0 "+pubA), 0o666)
	for c, key := range map[*clone]string{a: keyA, b: keyB} {
		git(t, c.dir, "config", "user.signingKey", key)
		git(t, c.dir, "config", "gpg.ssh.allowedSignersFile", allowed)
	}
	var fs []*facts.Fact
	for i := 0; i < 6; i++ {
		git(t, a.dir, "config", "rally.sign", fmt.Sprint(i%2 == 0))
		fs = append(fs, a.note(t, fmt.Sprintf("a %d", i)))
	}
	a.sync(t, true)
	for i := 0; i < 6; i++ {
		git(t, b.dir, "config", "rally.sign", fmt.Sprint(i%3 != 0))
		fs = append(fs, b.note(t, fmt.Sprintf("b %d", i)))
	}
	b.sync(t, false)
	v := b.verifier(t)
	if v.vc.tab == nil {
		// The first reader wrote it; the next one reads it.
		b2, err := b.ledger(t).Verifier()
		if err != nil {
			t.Fatal(err)
		}
		v = b2
	}
	if v.vc.tab == nil {
		t.Fatal("no table was read")
	}
	mem := &Verifier{vc: inMemory(t, b.common()), allowed: v.allowed}
	counts := map[string]int{}
	for _, f := range fs {
		counts[v.Verdict(f.ID, f.Tool)]++
		for _, tool := range []string{"t:c0", "t:c1", facts.SystemTool} {
			w, g := mem.Verdict(f.ID, tool), v.Verdict(f.ID, tool)
			if w != g {
				t.Errorf("%s by %s: %s from the table, %s in memory", f.Subject, tool, g, w)
			}
		}
	}
	if counts[Verified] != 3 || counts[BadSig] != 4 || counts[Unsigned] != 5 {
		t.Fatalf("verdicts %v, want 3 verified, 4 bad, 5 unsigned", counts)
	}
}

// A process that asks a few verdicts (log -n 10, show) reads and holds a
// few bytes whatever the history: the table's header, fences and a block
// or two, not every record (24 bytes a fact held, every byte of sigs
// read). Counted in bytes read and live heap, not timed.
func TestVerdictLookupReadsLittlePerFact(t *testing.T) {
	defer func(a int) { verdictTableAt = a }(verdictTableAt)
	verdictTableAt = 1000
	measure := func(n int) (read, held int64) {
		common := t.TempDir()
		ids := func() []string {
			rng := rand.New(rand.NewSource(int64(n)))
			var sigs []byte
			var ids []string
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("f_%016x", rng.Uint64())
				if i%(n/10) == 0 {
					ids = append(ids, id)
				}
				sigs = fmt.Appendf(sigs, "f %s u\n", id)
			}
			verdictsAt(t, common, sigs)
			first := newVerdictCache(common)
			first.load() // writes the table
			first.reset()
			return ids
		}()
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		r0 := verdictRead.Load()
		vc := newVerdictCache(common)
		vc.load()
		v := &Verifier{vc: vc}
		for _, id := range ids {
			if got := v.Verdict(id, "t:x"); got != Unsigned || len(vc.find(id)) != 1 {
				t.Fatalf("%s: %s", id, got)
			}
		}
		read = verdictRead.Load() - r0
		runtime.GC()
		runtime.ReadMemStats(&b)
		runtime.KeepAlive(v)
		runtime.KeepAlive(ids)
		return read, int64(b.HeapAlloc) - int64(a.HeapAlloc)
	}
	r1, h1 := measure(50000)
	r2, h2 := measure(250000)
	readPer, heldPer := float64(r2-r1)/200000, float64(h2-h1)/200000
	t.Logf("10 verdicts: %d bytes read, %d held at 50,000 facts; %d, %d at 250,000: %.2f, %.2f bytes a fact",
		r1, h1, r2, h2, readPer, heldPer)
	if readPer > 4 || heldPer > 4 {
		t.Fatalf("10 verdicts read %.2f and hold %.2f bytes a fact of the history, want at most 4", readPer, heldPer)
	}
}
