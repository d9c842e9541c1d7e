package cli

import (
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// Human output shows times in the reader's local zone, as git log does;
// JSON keeps the UTC the facts store.

// localTime renders a stored RFC 3339 time in loc ("2026-03-01 11:30
// CET"), or the text as it is when it does not parse.
func localTime(at string, loc *time.Location) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return at
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

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

// storedTimeRE matches a time as facts store it (RFC 3339 UTC).
var storedTimeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b`)
})

// localizeTimes rewrites the stored times in a message for people (an
// error, a hint, a suggestion's reason) into loc; JSON keeps them as
// they are.
func localizeTimes(s string, loc *time.Location) string {
	return storedTimeRE().ReplaceAllStringFunc(s, func(t string) string { return localTime(t, loc) })
}
