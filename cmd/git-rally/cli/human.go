package cli

import (
	"strings"

	"github.com/git-rally/git-rally/facts"
)

// Human output shows times in the reader's local zone, as git log does;
// JSON keeps the UTC the facts store.

// logLine describes a fact after its kind, which log prints in its own
// column: scopes, the subject, what it refers to, for whom, by whom.
func logLine(fa *facts.Fact) string {
	var b strings.Builder
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	if len(fa.Scopes) > 0 {
		add(strings.Join(fa.Scopes, " "))
	}
	if fa.Kind == facts.KindStatus && fa.Status != "" {
		add(facts.Sanitize(fa.Status, 40)) // the activity: working, needs-input, idle, ...
	}
	if fa.Subject != "" {
		add(`"` + facts.CutWords(facts.Sanitize(fa.Subject, 0), 80) + `"`)
	}
	if fa.Ref != "" {
		add("ref " + fa.Ref)
	}
	if fa.Target != "" {
		add("to " + fa.Target)
	}
	if fa.Reason != "" {
		add("(" + facts.CutWords(facts.Sanitize(fa.Reason, 0), 60) + ")")
	}
	add("by " + fa.Tool)
	return b.String()
}
