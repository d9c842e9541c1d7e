package ledger

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The verdict records a reader loads hold a few bytes a fact: a million
// facts' records are read by every command that asks a verdict (log,
// show, room, doctor under signing), counted here in live heap, not
// timed. A map from id strings to slices of records held over 100 bytes
// a fact.
func TestVerdictRecordsHoldLittlePerFact(t *testing.T) {
	live := func(n int) uint64 {
		common := t.TempDir()
		dir := filepath.Join(common, "rally", "verdicts")
		os.MkdirAll(dir, 0o777)
		rng := rand.New(rand.NewSource(int64(n)))
		var sigs []byte
		for i := 0; i < n; i++ {
			sigs = fmt.Appendf(sigs, "f f_%016x u\n", rng.Uint64())
		}
		os.WriteFile(filepath.Join(dir, "sigs"), sigs, 0o666)
		os.WriteFile(filepath.Join(dir, "head"), fmt.Appendf(nil, "%040x %d\n", 1, len(sigs)), 0o666)
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		vc := newVerdictCache(common)
		vc.load()
		runtime.GC()
		runtime.ReadMemStats(&b)
		runtime.KeepAlive(vc)
		if vc.head == "" {
			t.Fatal("the records were not loaded")
		}
		return b.HeapAlloc - a.HeapAlloc
	}
	l1, l2 := live(5000), live(45000)
	per := float64(l2-l1) / 40000
	t.Logf("verdict records: %d bytes live for 5,000 facts, %d for 45,000: %.1f bytes a fact", l1, l2, per)
	if per > 48 {
		t.Fatalf("the verdict records hold %.1f bytes a fact, want at most 48", per)
	}
}

// doctor's signature counts stream the facts: what they allocate a fact
// is a small part of what counting every fact held in All allocated.
func TestSignatureCountsStream(t *testing.T) {
	common, l, now := rebuildLedger(t)
	genLedger(t, l, rand.New(rand.NewSource(11)), 3000, now)
	allowed := filepath.Join(common, "allowed-signers")
	os.WriteFile(allowed, nil, 0o666)
	l.Signing.AllowedSigners = allowed
	v, err := l.Verifier()
	if err != nil || v == nil {
		t.Fatalf("verifier %v, %v", v, err)
	}
	var was, is map[string]int
	alloc := func(old bool) float64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		if old {
			all, err := l.All()
			if err != nil {
				t.Fatal(err)
			}
			was = v.Counts(all)
		} else if is, err = l.SignatureCounts(v); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return float64(b.TotalAlloc-a.TotalAlloc) / 3000
	}
	old, now2 := alloc(true), alloc(false)
	t.Logf("signature counts: %.0f bytes a fact through All, %.0f streamed", old, now2)
	if fmt.Sprint(was) != fmt.Sprint(is) || is[Unsigned] != 3000 {
		t.Fatalf("streamed counts %v, All's %v", is, was)
	}
	if now2 > old/10 {
		t.Fatalf("counting signatures allocates %.0f bytes a fact, holding every fact %.0f", now2, old)
	}
}
