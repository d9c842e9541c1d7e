package plan

import (
	"testing"

	"github.com/git-rally/git-rally/facts"
)

// Two tasks overlap in lint exactly when their takers' claims would
// conflict: one rule, not two.
func TestLintOverlapIsTheClaimRule(t *testing.T) {
	scopes := []string{"dir:src", "dir:src/api", "file:src/api/h.go", "glob:src/**/*.go", "glob:web/*.css",
		"file:web/a.css", "dir:.", "port:8080", "service:db", "task:other/x", "branch:main"}
	for _, a := range scopes {
		for _, b := range scopes {
			p := &Plan{ID: "p", Tasks: []Task{{ID: "a", Owns: []string{a}}, {ID: "b", Owns: []string{b}}}}
			_, probs := Lint(p, facts.PathContext{})
			got := false
			for _, pr := range probs {
				if pr.Code == OverlappingOwners {
					got = true
				} else {
					t.Errorf("%s / %s: unexpected %s: %s", a, b, pr.Code, pr.Message)
				}
			}
			_, _, want := facts.ScopesConflict([]string{a}, facts.Exclusive, []string{b}, facts.Exclusive)
			if got != want {
				t.Errorf("%s / %s: lint says overlap %v, claims say conflict %v", a, b, got, want)
			}
		}
	}
}

func TestLintCanonicalScopes(t *testing.T) {
	p := &Plan{ID: "p", Tasks: []Task{{ID: "a", Owns: []string{"./src/api/", "src/api/", "port:08080"}}}}
	canon, probs := Lint(p, facts.PathContext{})
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if got := canon.Tasks[0].Owns; len(got) != 2 || got[0] != "dir:src/api" || got[1] != "port:8080" {
		t.Fatalf("owns %v, want [dir:src/api port:8080]", got)
	}
	if canon.Tasks[0].DependsOn == nil {
		t.Fatal("depends_on is nil: it encodes as null")
	}
}

func TestCycles(t *testing.T) {
	p := &Plan{ID: "p", Tasks: []Task{
		{ID: "a", Owns: []string{"dir:a"}, DependsOn: []string{"b"}},
		{ID: "b", Owns: []string{"dir:b"}, DependsOn: []string{"a"}},
		{ID: "c", Owns: []string{"dir:c"}, DependsOn: []string{"a", "b"}},
		{ID: "d", Owns: []string{"dir:d"}, DependsOn: []string{"e"}},
		{ID: "e", Owns: []string{"dir:e"}, DependsOn: []string{"f"}},
		{ID: "f", Owns: []string{"dir:f"}, DependsOn: []string{"d"}},
	}}
	_, probs := Lint(p, facts.PathContext{})
	var got []string
	for _, pr := range probs {
		if pr.Code != Cycle {
			t.Errorf("unexpected %s", pr.Message)
		}
		got = append(got, pr.Message)
	}
	want := []string{"tasks a and b depend on each other in a cycle: a -> b -> a",
		"tasks d, e and f depend on each other in a cycle: d -> e -> f -> d"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("cycles %q, want %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"p","tasks":[{"id":"a","owns":["dir:a"],"depends_on":["a"]}]}`))
	f.Add([]byte(`{"id":"p","tasks":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := Parse(data); err == nil {
			Lint(p, facts.PathContext{}) // never panics
		}
	})
}
