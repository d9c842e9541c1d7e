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
	f.Add([]byte("id: p\ntasks:\n  - {id: a, owns: [dir:a], depends_on: [a]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) (*Plan, error){Parse, ParseYAML} {
			if p, err := parse(data); err == nil {
				Lint(p, facts.PathContext{}) // never panics
			}
		}
	})
}

// A YAML plan and its JSON spelling are one plan.
func TestYAMLIsTheSamePlan(t *testing.T) {
	j, err := Parse([]byte(`{"id":"p","goal":"g","tasks":[{"id":"a","owns":["dir:a"],"depends_on":[],"check":"true","agent":"codex"},{"id":"b","owns":["b.go"],"depends_on":["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseYAML([]byte("id: p\ngoal: g\ntasks:\n  - {id: a, owns: [dir:a], depends_on: [], check: 'true', agent: codex}\n  - id: b\n    owns: [b.go]\n    depends_on: [a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cj, _ := Lint(j, facts.PathContext{})
	cy, _ := Lint(y, facts.PathContext{})
	if cj.Encode() != cy.Encode() {
		t.Fatalf("YAML %s\nJSON %s", cy.Encode(), cj.Encode())
	}
	for _, bad := range []string{"id: [x]\ntasks: []\n", "id: p\ntasks:\n  - id: a\n    owns: dir:a\n", "- a\n- b\n", "id: 1\ntasks: [{id: a, owns: [x]}]\n"} {
		if _, err := ParseYAML([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if !IsYAML("plan.yml", nil) || IsYAML("plan.json", []byte("id: x")) || !IsYAML("-", []byte("id: x")) || IsYAML("-", []byte(" {")) {
		t.Error("IsYAML")
	}
}
