package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// Task states on the board.
const (
	Waiting = "waiting" // a dependency is not done
	Ready   = "ready"   // nobody holds it and it can start
	Taken   = "taken"   // its taker holds task:<plan>/<task>
	Done    = "done"    // its taker reported it with evidence
)

// TaskView is a task and where it stands.
type TaskView struct {
	Task      Task
	State     string
	Holder    *facts.Fact // the claim that holds it (taken)
	Report    *facts.Fact // the report that counts (done)
	WaitingOn []string    // the dependencies not done yet
	Branch    string      // done: the branch of the session that reported it
}

// Board is a plan and where each of its tasks stands.
type Board struct {
	Record   *facts.PlanRecord
	Plan     *Plan
	Tasks    []TaskView
	Done     int
	Total    int
	CanClose bool
	Closed   bool
}

// NewBoard computes the board of a plan from the room.
func NewBoard(st *facts.State, rec *facts.PlanRecord) (*Board, error) {
	p, err := Decode(rec)
	if err != nil {
		return nil, err
	}
	b := &Board{Record: rec, Plan: p, Total: len(p.Tasks), Closed: rec.Closed != nil}
	for _, t := range p.Tasks {
		v := TaskView{Task: t, Report: rec.Reports[t.ID]}
		if v.Report != nil && v.Report.Session != "" {
			if s := st.Sessions[v.Report.Session]; s != nil {
				v.Branch = s.Branch
			}
		}
		if v.Report == nil {
			v.Holder = st.TaskHolder(p.ID, t.ID)
			for _, d := range t.DependsOn {
				if rec.Reports[d] == nil {
					v.WaitingOn = append(v.WaitingOn, d)
				}
			}
		}
		switch {
		case v.Report != nil:
			v.State = Done
			b.Done++
		case v.Holder != nil:
			v.State = Taken
		case len(v.WaitingOn) > 0:
			v.State = Waiting
		default:
			v.State = Ready
		}
		b.Tasks = append(b.Tasks, v)
	}
	b.CanClose = !b.Closed && b.Total > 0 && b.Done == b.Total
	return b, nil
}

// Task returns the view of one task, nil when the plan has no such task.
func (b *Board) Task(id string) *TaskView {
	for i := range b.Tasks {
		if b.Tasks[i].Task.ID == id {
			return &b.Tasks[i]
		}
	}
	return nil
}

// Find names a plan: by its id, by its plan fact's id (or a prefix of 8+
// characters), or, with no name, the only open plan (none open: the
// newest plan the room still holds).
func Find(st *facts.State, name string) (*facts.PlanRecord, error) {
	if name == "" {
		open := st.OpenPlans()
		switch len(open) {
		case 1:
			return open[0], nil
		case 0:
			var newest *facts.PlanRecord
			for _, rec := range st.Plans {
				if newest == nil || newest.Fact.Key().Less(rec.Fact.Key()) {
					newest = rec
				}
			}
			if newest != nil {
				return newest, nil // the last one closed
			}
			return nil, &facts.UsageError{Msg: "no plan is open in this room", Hint: "git rally plan start <file>"}
		}
		ids := make([]string, len(open))
		for i, p := range open {
			ids[i] = p.ID()
		}
		return nil, &facts.UsageError{Msg: "several plans are open: " + strings.Join(ids, ", ") + "; name one",
			Hint: "git rally plan status " + ids[0]}
	}
	if rec := st.LatestPlan(name); rec != nil {
		return rec, nil
	}
	if strings.HasPrefix(name, "f_") && len(name) >= 8 {
		var hits []*facts.PlanRecord
		for id, rec := range st.Plans {
			if strings.HasPrefix(id, name) {
				hits = append(hits, rec)
			}
		}
		if len(hits) == 1 {
			return hits[0], nil
		}
	}
	return nil, &facts.UsageError{Msg: fmt.Sprintf("no plan %q in this room", name), Hint: "git rally plan status"}
}

// FindTask names a task: <plan>/<task>, or <task> of the plan named (or,
// with no plan named, of the one open plan that has such a task).
func FindTask(st *facts.State, name, planName string) (*facts.PlanRecord, string, error) {
	if p, t, ok := strings.Cut(name, "/"); ok && planName == "" {
		planName, name = p, t
	}
	if name == "" {
		return nil, "", &facts.UsageError{Msg: "empty task name", Hint: "git rally plan status"}
	}
	if planName != "" {
		rec, err := Find(st, planName)
		return rec, name, err
	}
	var hits []*facts.PlanRecord
	for _, rec := range st.OpenPlans() {
		if p, err := Decode(rec); err == nil && p.Task(name) != nil {
			hits = append(hits, rec)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], name, nil
	case 0:
		return nil, "", &facts.UsageError{Msg: fmt.Sprintf("no open plan has a task %q", name), Hint: "git rally plan status"}
	}
	return nil, "", &facts.UsageError{Msg: fmt.Sprintf("task %q is in several open plans; name it <plan>/%s", name, name),
		Hint: "git rally plan take " + hits[0].ID() + "/" + name}
}

// OpenBoards returns the boards of the open plans, oldest first; a plan
// whose body does not decode is left out.
func OpenBoards(st *facts.State) []*Board {
	var out []*Board
	for _, rec := range st.OpenPlans() {
		if b, err := NewBoard(st, rec); err == nil {
			out = append(out, b)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Record.Fact.Key().Less(out[j].Record.Fact.Key()) })
	return out
}

// MergeAfter maps each session that reported a plan task to the sessions
// that reported the tasks it depends on: their branches merge first.
func MergeAfter(st *facts.State) map[string][]string {
	out := map[string][]string{}
	for _, rec := range st.Plans {
		p, err := Decode(rec)
		if err != nil {
			continue
		}
		for _, t := range p.Tasks {
			r := rec.Reports[t.ID]
			if r == nil || r.Session == "" {
				continue
			}
			for _, d := range t.DependsOn {
				if dr := rec.Reports[d]; dr != nil && dr.Session != "" && dr.Session != r.Session && !containsStr(out[r.Session], dr.Session) {
					out[r.Session] = append(out[r.Session], dr.Session)
				}
			}
		}
	}
	return out
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
