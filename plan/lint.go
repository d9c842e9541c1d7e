package plan

import (
	"fmt"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// Lint problem codes (SPEC §15), and bad-id and bad-scope for ids and
// scopes that could never be claimed.
const (
	OverlappingOwners = "overlapping-owners"
	UnknownDependency = "unknown-dependency"
	Cycle             = "cycle"
	DuplicateID       = "duplicate-id"
	NoOwns            = "no-owns"
	BadID             = "bad-id"
	BadScope          = "bad-scope"
	BadArgs           = "bad-args"
)

// Problem is one reason a plan cannot start.
type Problem struct {
	Code    string
	Tasks   []string
	Scopes  []string
	Message string
}

// Lint checks a parsed plan and returns it with canonical scopes (as
// claims store them) and its problems. Two tasks overlap by the very rule
// claims conflict by (facts.Overlap), so a plan that lints clean never
// has two of its takers refused by each other. pc resolves bare paths
// from the repository's top level.
func Lint(p *Plan, pc facts.PathContext) (*Plan, []Problem) {
	var probs []Problem
	add := func(code string, tasks, scopes []string, format string, a ...any) {
		probs = append(probs, Problem{Code: code, Tasks: tasks, Scopes: scopes, Message: fmt.Sprintf(format, a...)})
	}
	canon := &Plan{ID: p.ID, Goal: p.Goal, Tasks: make([]Task, len(p.Tasks))}
	parsed := make([][]facts.Scope, len(p.Tasks))
	first := map[string]int{}
	pc.Cwd = pc.Root // owns are relative to the top level, wherever lint runs
	for i, t := range p.Tasks {
		ct := t
		ct.Owns, ct.DependsOn = []string{}, append([]string{}, t.DependsOn...)
		for k, a := range t.Args {
			if a == "" || strings.ContainsRune(a, 0) || len(a) > 4096 {
				add(BadArgs, []string{t.ID}, nil, "task %s: argument %d of \"args\" is empty, holds NUL or is longer than 4096 bytes", t.ID, k+1)
			}
		}
		if len(t.Args) > 64 {
			add(BadArgs, []string{t.ID}, nil, "task %s has %d \"args\": at most 64", t.ID, len(t.Args))
		}
		switch j, dup := first[t.ID]; {
		case !ValidID(t.ID):
			add(BadID, []string{t.ID}, nil, "task #%d has the id %q: want 1-64 letters, digits, '.', '_' or '-'", i+1, t.ID)
		case dup:
			add(DuplicateID, []string{t.ID, t.ID}, nil, "tasks #%d and #%d both have the id %s", j+1, i+1, t.ID)
		default:
			first[t.ID] = i
		}
		if len(t.Owns) == 0 {
			add(NoOwns, []string{t.ID}, nil, "task %s owns nothing: give it the paths only it may change (\"owns\": [\"dir:src/api\"])", t.ID)
		}
		seen := map[string]bool{}
		for _, o := range t.Owns {
			s, err := facts.ParseScope(o, pc)
			if err != nil {
				add(BadScope, []string{t.ID}, []string{o}, "task %s owns %q: %v", t.ID, o, err)
				continue
			}
			if !seen[s.String()] {
				seen[s.String()] = true
				ct.Owns = append(ct.Owns, s.String())
				parsed[i] = append(parsed[i], s)
			}
		}
		canon.Tasks[i] = ct
	}
	for i := range p.Tasks {
		for j := i + 1; j < len(p.Tasks); j++ {
			a, b := canon.Tasks[i].ID, canon.Tasks[j].ID
			for _, x := range parsed[i] {
				for _, y := range parsed[j] {
					if facts.Overlap(x, y) {
						add(OverlappingOwners, []string{a, b}, []string{x.String(), y.String()},
							"tasks %s and %s own overlapping scopes: %s owns %s, %s owns %s; a write task's paths must be its own", a, b, a, x, b, y)
					}
				}
			}
		}
	}
	for _, t := range p.Tasks {
		for _, d := range t.DependsOn {
			if _, ok := first[d]; !ok {
				add(UnknownDependency, []string{t.ID, d}, nil, "task %s depends on %q, which is not a task of plan %s", t.ID, d, p.ID)
			}
		}
	}
	for _, c := range cycles(p, first) {
		if len(c) == 1 {
			add(Cycle, c, nil, "task %s depends on itself", c[0])
			continue
		}
		add(Cycle, c, nil, "tasks %s depend on each other in a cycle: %s -> %s", andList(c), strings.Join(c, " -> "), c[0])
	}
	return canon, probs
}

// cycles finds the dependency cycles among known tasks, each once, each
// starting at its first task in file order.
func cycles(p *Plan, index map[string]int) [][]string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(p.Tasks))
	var stack []int
	var out [][]string
	seen := map[string]bool{}
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for _, d := range p.Tasks[i].DependsOn {
			j, ok := index[d]
			if !ok {
				continue
			}
			switch color[j] {
			case white:
				visit(j)
			case grey:
				k := len(stack) - 1
				for stack[k] != j {
					k--
				}
				c := rotate(stack[k:])
				names := make([]string, len(c))
				for n, x := range c {
					names[n] = p.Tasks[x].ID
				}
				if key := strings.Join(names, "\x00"); !seen[key] {
					seen[key] = true
					out = append(out, names)
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range p.Tasks {
		if _, ok := index[p.Tasks[i].ID]; ok && index[p.Tasks[i].ID] == i && color[i] == white {
			visit(i)
		}
	}
	return out
}

// rotate starts a cycle at its lowest index.
func rotate(c []int) []int {
	m := 0
	for i, x := range c {
		if x < c[m] {
			m = i
		}
	}
	return append(append([]int{}, c[m:]...), c[:m]...)
}

// andList renders a, b and c.
func andList(ss []string) string {
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}
