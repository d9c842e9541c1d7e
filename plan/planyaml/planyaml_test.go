package planyaml

import (
	"testing"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte("id: p\ntasks:\n  - {id: a, owns: [dir:a], depends_on: [a]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := Parse(data); err == nil {
			plan.Lint(p, facts.PathContext{}) // never panics
		}
	})
}

// A YAML plan and its JSON spelling are one plan.
func TestYAMLIsTheSamePlan(t *testing.T) {
	j, err := plan.Parse([]byte(`{"id":"p","goal":"g","tasks":[{"id":"a","owns":["dir:a"],"depends_on":[],"check":"true","agent":"codex"},{"id":"b","owns":["b.go"],"depends_on":["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	y, err := Parse([]byte("id: p\ngoal: g\ntasks:\n  - {id: a, owns: [dir:a], depends_on: [], check: 'true', agent: codex}\n  - id: b\n    owns: [b.go]\n    depends_on: [a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cj, _ := plan.Lint(j, facts.PathContext{})
	cy, _ := plan.Lint(y, facts.PathContext{})
	if cj.Encode() != cy.Encode() {
		t.Fatalf("YAML %s\nJSON %s", cy.Encode(), cj.Encode())
	}
	for _, bad := range []string{"id: [x]\ntasks: []\n", "id: p\ntasks:\n  - id: a\n    owns: dir:a\n", "- a\n- b\n", "id: 1\ntasks: [{id: a, owns: [x]}]\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if !plan.IsYAML("plan.yml", nil) || plan.IsYAML("plan.json", []byte("id: x")) || !plan.IsYAML("-", []byte("id: x")) || plan.IsYAML("-", []byte(" {")) {
		t.Error("IsYAML")
	}
}
