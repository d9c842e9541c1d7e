package facts

import (
	"fmt"
	"math/rand"
	"testing"
)

// The index finds exactly the claims the pairwise comparison finds.
func TestClaimIndexMatchesPairwise(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	paths := []string{"src", "src/a", "src/a/b.go", "src/a/c.go", "src/b.go", "docs", "docs/x.md", "a", "ab/c", "."}
	globs := []string{"src/**", "**/*.go", "src/a/*.go", "docs/*.md", "*", "src/{a,b}/x"}
	scope := func() string {
		switch rng.Intn(6) {
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
		}
		return "task:" + []string{"t1", "t2"}[rng.Intn(2)]
	}
	for round := 0; round < 200; round++ {
		var claims []*Fact
		for i := 0; i < 2+rng.Intn(25); i++ {
			c := &Fact{ID: fmt.Sprintf("f_%016x", i), Clock: int64(i + 1), Tool: fmt.Sprintf("t%d", rng.Intn(4)),
				Access: []string{Exclusive, Shared, Advisory}[rng.Intn(3)]}
			for k := 0; k < 1+rng.Intn(2); k++ {
				c.Scopes = append(c.Scopes, scope())
			}
			claims = append(claims, c)
		}
		ix := newClaimIndex(claims)
		for i, c := range claims {
			cands := map[int]bool{}
			for _, j := range ix.candidates(c) {
				cands[j] = true
			}
			for j, d := range claims {
				if j == i {
					continue
				}
				if _, _, ok := ScopesConflict(d.Scopes, Exclusive, c.Scopes, Exclusive); ok && !cands[j] {
					t.Fatalf("round %d: %v and %v overlap, but the index does not offer one for the other", round, d.Scopes, c.Scopes)
				}
			}
		}
	}
}

// With many claims on distinct files, each claim meets only the claims
// that could overlap it: the work grows with the claims, not their pairs.
func TestClaimIndexCandidatesStayFew(t *testing.T) {
	for _, n := range []int{20, 2000} {
		var claims []*Fact
		for i := 0; i < n; i++ {
			claims = append(claims, &Fact{ID: fmt.Sprintf("f_%016x", i), Tool: "a", Scopes: []string{fmt.Sprintf("file:src/m%d/f%d.go", i%40, i)}})
		}
		claims = append(claims, &Fact{ID: "f_ffffffffffffffff", Tool: "b", Scopes: []string{"dir:src/m3"}})
		ix := newClaimIndex(claims)
		total := 0
		for _, c := range claims[:n] {
			total += len(ix.candidates(c))
		}
		// Each file claim: itself and the one dir claim when it is under it.
		if total > 2*n {
			t.Errorf("%d claims: %d candidates in all, want at most %d", n, total, 2*n)
		}
	}
}
