package facts

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// OverlapSubject begins the subject of the risk rally records when two
// agent branches are predicted to conflict (SPEC §16).
const OverlapSubject = "overlap-detected"

// BranchOverlap is a predicted conflict between two branches: their owners
// (tool ids, "" when unknown) and the files.
type BranchOverlap struct {
	A, B           string // branches
	OwnerA, OwnerB string
	Files          []string
	Revision       string // the commit whose arrival revealed it
}

// overlapKey names a pair of branches and a set of files, in either order.
func overlapKey(a, b string, files []string) string {
	if b < a {
		a, b = b, a
	}
	fs := append([]string(nil), files...)
	sort.Strings(fs)
	return a + "\x00" + b + "\x00" + strings.Join(fs, "\x00")
}

// OverlapBranches reads the two branches an overlap-detected risk names
// (its branch: scopes); ok is false for any other fact.
func OverlapBranches(f *Fact) (a, b string, ok bool) {
	if f.Kind != KindRisk || !strings.HasPrefix(f.Subject, OverlapSubject) || len(f.Scopes) != 2 {
		return "", "", false
	}
	a, okA := strings.CutPrefix(f.Scopes[0], "branch:")
	b, okB := strings.CutPrefix(f.Scopes[1], "branch:")
	return a, b, okA && okB
}

// OverlapOwners are the owners an overlap-detected risk names.
func OverlapOwners(f *Fact) []string {
	if _, _, ok := OverlapBranches(f); !ok {
		return nil
	}
	var out []string
	for _, e := range f.Evidence {
		if o, ok := strings.CutPrefix(e, "owner:"); ok {
			out = append(out, o)
		}
	}
	return out
}

// OverlapRisks records one overlap-detected risk, authored by rally, for
// each overlap that no open risk records yet for the same pair of branches
// and set of files. It runs under the ledger lock, so two commits landing
// at once never record one overlap twice.
func OverlapRisks(ovs []BranchOverlap) AppendFunc {
	return func(st *State, now time.Time) ([]*Fact, error) {
		have := map[string]bool{}
		for _, r := range st.Risks {
			if a, b, ok := OverlapBranches(r); ok {
				have[overlapKey(a, b, r.Files)] = true
			}
		}
		var out []*Fact
		for _, o := range ovs {
			k := overlapKey(o.A, o.B, o.Files)
			if have[k] || len(o.Files) == 0 {
				continue
			}
			have[k] = true
			out = append(out, overlapRisk(o))
		}
		for _, f := range out {
			if err := f.Validate(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

func overlapRisk(o BranchOverlap) *Fact {
	if o.B < o.A {
		o.A, o.B, o.OwnerA, o.OwnerB = o.B, o.A, o.OwnerB, o.OwnerA
	}
	files := append([]string(nil), o.Files...)
	sort.Strings(files)
	who := func(branch, owner string) string {
		if owner == "" {
			return branch
		}
		return branch + " (" + owner + ")"
	}
	shown := files
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(files)-5)
	}
	subject := fmt.Sprintf("%s: %s and %s conflict on %s%s", OverlapSubject, who(o.A, o.OwnerA), who(o.B, o.OwnerB),
		strings.Join(shown, ", "), more)
	if len(subject) > MaxSubject {
		subject = strings.ToValidUTF8(subject[:MaxSubject], "")
	}
	f := &Fact{Kind: KindRisk, Tool: SystemTool, Severity: "warn", Subject: subject,
		Scopes: []string{"branch:" + o.A, "branch:" + o.B}, Files: files, Revision: o.Revision,
		Body: fmt.Sprintf("Merging %s and %s is predicted to conflict (git merge-tree) on: %s. "+
			"Agree who changes what, or merge one into the other before going on.", o.A, o.B, strings.Join(files, ", "))}
	if len(f.Body) > MaxBody {
		f.Body = strings.ToValidUTF8(f.Body[:MaxBody], "")
	}
	for _, w := range []string{o.OwnerA, o.OwnerB} {
		if w != "" {
			f.Evidence = append(f.Evidence, "owner:"+w)
		}
	}
	return f
}

// BranchOwners maps each branch a session fact records to the session's
// tool, and marks the branches whose session was stopped or removed: they
// are not live.
func BranchOwners(st *State) (owner map[string]string, stopped map[string]bool) {
	owner, stopped = map[string]string{}, map[string]bool{}
	for _, s := range st.Sessions {
		if s.Branch == "" {
			continue
		}
		owner[s.Branch] = s.Tool
		stopped[s.Branch] = s.Status == "stopped" || s.Status == "removed"
	}
	return owner, stopped
}
