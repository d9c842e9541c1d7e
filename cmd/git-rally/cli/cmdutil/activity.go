package cmdutil

import (
	"time"

	"github.com/git-rally/git-rally/facts"
)

// ActivityTag is a peer's or a session's activity for human output
// (", needs-input for 2m"), "" when it reported none. needs-input is what
// a person looks for: it stands out.
func ActivityTag(pt Painter, now time.Time, activity, since string) string {
	if activity == "" {
		return ""
	}
	a := facts.Sanitize(activity, 40)
	if activity == facts.ActivityNeedsInput {
		a = pt(CRed, "NEEDS INPUT")
	}
	out := ", " + a
	if t, err := time.Parse(time.RFC3339Nano, since); err == nil {
		out += " for " + facts.Ago(now.Sub(t))
	}
	return out
}
