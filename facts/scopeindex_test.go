package facts

import (
	"fmt"
	"math/rand"
	"testing"
)

// The index finds the very scope a scan finds: the first that overlaps.
func TestScopeIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	paths := []string{"src", "src/a", "src/a/b.go", "src/a/c.go", "src/b.go", "src/a-b", "src/a.go", "src/a/b.go/c", "docs", "docs/x.md", "a", "ab/c", "", "."}
	globs := []string{"src/**", "**/*.go", "src/a/*.go", "src/a/**", "src/a/b.go/**", "docs/*.md", "*", "**", "src/{a,b}/x", "src/a/b.go", "src/[ab]/x"}
	scope := func() string {
		switch rng.Intn(7) {
		case 0:
			return "file:" + paths[rng.Intn(len(paths)-1)]
		case 1:
			return "dir:" + paths[rng.Intn(len(paths))]
		case 2:
			return "glob:" + globs[rng.Intn(len(globs))]
		case 3:
			return fmt.Sprintf("port:%d", 8080+rng.Intn(3))
		case 4:
			return "branch:" + []string{"main", "dev"}[rng.Intn(2)]
		case 5:
			return []string{"opaque:x", "x", ":y"}[rng.Intn(3)]
		}
		return "task:" + []string{"t1", "t2"}[rng.Intn(2)]
	}
	for round := 0; round < 3000; round++ {
		f := &Fact{}
		for i := 0; i < scopeIndexMin+rng.Intn(40); i++ {
			f.Scopes = append(f.Scopes, scope())
		}
		var ix overlapIndex
		for k := 0; k < 20; k++ {
			q := ParseCanonical(scope())
			want, wantOK := "", false
			for _, sc := range f.Scopes {
				if Overlap(ParseCanonical(sc), q) {
					want, wantOK = sc, true
					break
				}
			}
			got, ok := ix.first(f, q)
			if got != want || ok != wantOK {
				t.Fatalf("round %d: %v against %v: index %q %v, scan %q %v", round, q, f.Scopes, got, ok, want, wantOK)
			}
		}
		// Two long lists: the pair a scan of every pair finds first.
		var other []string
		for i := 0; i < scopeIndexMin+rng.Intn(20); i++ {
			other = append(other, scope())
		}
		wx, wy, wok := "", "", false
	scan:
		for _, x := range f.Scopes {
			for _, y := range other {
				if Overlap(ParseCanonical(x), ParseCanonical(y)) {
					wx, wy, wok = x, y, true
					break scan
				}
			}
		}
		if x, y, ok := ScopesConflict(f.Scopes, Exclusive, other, Exclusive); x != wx || y != wy || ok != wok {
			t.Fatalf("round %d: ScopesConflict(%v, %v) = %q %q %v, scan %q %q %v", round, f.Scopes, other, x, y, ok, wx, wy, wok)
		}
	}
}

// bigClaimCheck is a check of n paths against another agent's claim of 25n
// scopes (every path held, one in ten by a dir): the comparisons it makes.
func bigClaimCheck(tb testing.TB, n int) (compared int, res CheckResult) {
	st, paths := bigClaim(n)
	res = st.checkScopes(Owner{Tool: "me:1"}, paths, at(60), &compared)
	return compared, res
}

func bigClaim(n int) (*State, []Scope) {
	claim := &Fact{Kind: KindClaim, Tool: "other:1", Access: Exclusive, LeaseS: 7200}
	for i := 0; i < 25*n; i++ {
		claim.Scopes = append(claim.Scopes, fmt.Sprintf("file:src/m%d/f%d.go", i%97, i))
	}
	claim.Scopes = append(claim.Scopes, "dir:docs", "glob:assets/**/*.png")
	st := Build([]*Fact{mk(1, 0, *claim)})
	paths := make([]Scope, n)
	for i := range paths {
		paths[i] = Scope{"file", fmt.Sprintf("src/m%d/f%d.go", (4*i)%97, 4*i)}
		if i%10 == 1 {
			paths[i].Value = fmt.Sprintf("docs/p%d.md", i)
		}
	}
	return st, paths
}

// The write check of many paths against a claim of many scopes makes a
// number of comparisons that grows with paths + scopes, not their product
// (issue 26: 1,000 paths against 100,000 scopes took 10.9 s).
func TestCheckComparisonsSubquadratic(t *testing.T) {
	small, res := bigClaimCheck(t, 250)
	stops := 0
	for _, f := range res.Findings {
		if f.Code == ClaimedPath {
			stops++
		}
	}
	if stops != 250 {
		t.Fatalf("%d of 250 paths reported held, want all", stops)
	}
	big, _ := bigClaimCheck(t, 1000)
	// Four times the paths against four times the scopes: a scan makes
	// 16 times the comparisons, the index about 4.
	if ratio := float64(big) / float64(small); ratio > 6 {
		t.Fatalf("comparisons grew %.1f times (%d -> %d) for 4x paths and 4x scopes: quadratic", ratio, small, big)
	}
	if big > 10*1000 {
		t.Fatalf("%d comparisons for 1,000 paths: more than a few each", big)
	}
}

// BenchmarkCheckBigClaim is check before-write of 4,000 paths against a
// claim of 100,000 scopes.
func BenchmarkCheckBigClaim(b *testing.B) {
	st, paths := bigClaim(4000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.CheckScopes(Owner{Tool: "me:1"}, paths, at(60))
	}
}
