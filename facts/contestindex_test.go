package facts

import (
	"fmt"
	"math/rand"
	"testing"
)

// heldOver finds exactly what comparing every pair finds.
func TestHeldOverMatchesPairwise(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	paths := []string{"src", "src/a", "src/a/b.go", "src/a/c.go", "src/b.go", "src/a-b", "src/a.go", "src/a/b.go/c", "docs", "docs/x.md", "a", "ab/c", "", "."}
	globs := []string{"src/**", "**/*.go", "src/a/*.go", "src/a/**", "src/a/b.go/**", "docs/*.md", "*", "**", "src/{a,b}/x", "src/a/b.go"}
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
	defer func(w int) { wideScan = w }(wideScan)
	for round := 0; round < 5000; round++ {
		wideScan = []int{0, 16}[round%2] // look the ancestors up, or compare with each dir and glob
		var claims []*Fact
		for i := 0; i < 2+rng.Intn(30); i++ {
			c := &Fact{ID: fmt.Sprintf("f_%016x", i), Clock: int64(i + 1), Tool: fmt.Sprintf("t%d", rng.Intn(4)),
				Access: []string{Exclusive, Shared, Advisory}[rng.Intn(3)]}
			for k := 0; k < 1+rng.Intn(2); k++ {
				c.Scopes = append(c.Scopes, scope())
			}
			claims = append(claims, c)
		}
		got := heldOver(claims, nil)
		for i, c := range claims {
			want := int32(-1)
			for j, d := range claims[:i] {
				if d.Owner() == c.Owner() {
					continue
				}
				if _, _, ok := ScopesConflict(d.Scopes, d.Access, c.Scopes, c.Access); ok {
					want = int32(j)
					break
				}
			}
			if got[i] != want {
				t.Fatalf("round %d: claim %d %v: held over by %d, want %d", round, i, c.Scopes, got[i], want)
			}
		}
	}
}

// With many claims on distinct files, each claim is checked against only
// the claims that could overlap it: the work grows with the claims, not
// their pairs.
func TestHeldOverChecksFewPairs(t *testing.T) {
	for _, n := range []int{20, 2000} {
		// The dir claim comes first: it holds over the file claims under it.
		claims := []*Fact{{ID: "f_0000000000000000", Tool: "b", Scopes: []string{"dir:src/m3"}}}
		for i := 0; i < n; i++ {
			claims = append(claims, &Fact{ID: fmt.Sprintf("f_%016x", i+1), Tool: "a", Scopes: []string{fmt.Sprintf("file:src/m%d/f%d.go", i%40, i)}})
		}
		pairs := 0
		held := heldOver(claims, &pairs)
		under := 0
		for i, c := range claims[1:] {
			if want := int32(-1); i%40 == 3 {
				under++
				if held[i+1] != 0 {
					t.Errorf("%d claims: %v is held over by %d, want 0", n, c.Scopes, held[i+1])
				}
			} else if held[i+1] != want {
				t.Errorf("%d claims: %v is held over by %d, want none", n, c.Scopes, held[i+1])
			}
		}
		// Each file claim under the dir claim meets it once; no other
		// pair is checked.
		if pairs != under {
			t.Errorf("%d claims: %d pairs checked, want %d", n, pairs, under)
		}
		// Without the dir claim, distinct files meet nothing.
		pairs = 0
		heldOver(claims[1:], &pairs)
		if pairs != 0 {
			t.Errorf("%d claims on distinct files: %d pairs checked, want 0", n, pairs)
		}
	}
}
