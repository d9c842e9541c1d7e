package worktree

import (
	"math/rand"
	"reflect"
	"testing"
)

func row(branch string, changed int, baseConflicts ...string) *Row {
	r := &Row{Branch: branch, Head: "h-" + branch, Ahead: 1, BaseConflicts: baseConflicts}
	for i := 0; i < changed; i++ {
		r.Changed = append(r.Changed, branch+string(rune('a'+i)))
	}
	return r
}

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rows      []*Row
		conflicts []Pair
		order     []string
		conflict  map[string][]string // branch -> what it conflicts with at its step
	}{
		{
			name:  "no conflicts: smaller first, then by name",
			rows:  []*Row{row("rally/b", 2), row("rally/a", 2), row("rally/c", 1)},
			order: []string{"rally/c", "rally/a", "rally/b"},
		},
		{
			name:      "clean branches first; the second of a conflicting pair is flagged",
			rows:      []*Row{row("rally/a", 1), row("rally/b", 3), row("rally/c", 5)},
			conflicts: []Pair{{"rally/a", "rally/b", []string{"x"}}},
			order:     []string{"rally/c", "rally/a", "rally/b"},
			conflict:  map[string][]string{"rally/b": {"rally/a"}},
		},
		{
			name:     "a base conflict goes last",
			rows:     []*Row{row("rally/a", 1, "f"), row("rally/b", 9)},
			order:    []string{"rally/b", "rally/a"},
			conflict: map[string][]string{"rally/a": {"main"}},
		},
		{
			name:      "a branch conflicting with two is left for after an independent set",
			rows:      []*Row{row("rally/hub", 1), row("rally/x", 2), row("rally/y", 2)},
			conflicts: []Pair{{"rally/hub", "rally/x", []string{"h"}}, {"rally/hub", "rally/y", []string{"h"}}},
			order:     []string{"rally/x", "rally/y", "rally/hub"},
			conflict:  map[string][]string{"rally/hub": {"rally/x", "rally/y"}},
		},
		{
			name:  "rows with nothing to merge are not ordered",
			rows:  []*Row{row("rally/a", 1), {Branch: "rally/idle", Head: "h"}, {Path: "/detached", Head: "h", Ahead: 1}},
			order: []string{"rally/a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 5; i++ {
				rows := append([]*Row(nil), tc.rows...)
				rand.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
				p := &Plan{Base: "main", Rows: rows, Conflicts: tc.conflicts}
				p.order()
				if !reflect.DeepEqual(p.Order, tc.order) {
					t.Fatalf("order = %v, want %v", p.Order, tc.order)
				}
				for _, s := range p.Steps {
					want := tc.conflict[s.Branch]
					if s.Conflict != (len(want) > 0) || (len(want) > 0 && !reflect.DeepEqual(s.With, want)) {
						t.Errorf("step %s: conflict %v with %v, want %v", s.Branch, s.Conflict, s.With, want)
					}
				}
			}
		})
	}
}

// A plan task's branch merges after the branches of the tasks it depends
// on, whatever their sizes and names; a cycle falls back to the usual order.
func TestOrderFollowsPlanDependencies(t *testing.T) {
	mk := func(branch, session string, changed int) *Row {
		r := row(branch, changed)
		r.Session = session
		return r
	}
	for _, tc := range []struct {
		name  string
		after map[string][]string
		order []string
	}{
		{"none", nil, []string{"rally/docs", "rally/api", "rally/ui"}},
		{"docs after api and ui", map[string][]string{"docs": {"api", "ui"}}, []string{"rally/api", "rally/ui", "rally/docs"}},
		{"a chain", map[string][]string{"api": {"ui"}, "docs": {"api"}}, []string{"rally/ui", "rally/api", "rally/docs"}},
		{"a cycle", map[string][]string{"api": {"ui"}, "ui": {"api"}}, []string{"rally/docs", "rally/api", "rally/ui"}},
	} {
		p := &Plan{Base: "main", Rows: []*Row{mk("rally/ui", "ui", 3), mk("rally/docs", "docs", 1), mk("rally/api", "api", 2)}, after: tc.after}
		p.order()
		if !reflect.DeepEqual(p.Order, tc.order) {
			t.Errorf("%s: order = %v, want %v", tc.name, p.Order, tc.order)
		}
	}
}
