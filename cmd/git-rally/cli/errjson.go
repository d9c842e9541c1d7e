package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/worktree"
)

// With --json a failure is also an answer on stdout, so an agent that
// parses stdout learns what happened: {"error": {...}} (SPEC 7).

type errorJSON struct {
	Exit      int            `json:"exit"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Hints     []string       `json:"hints"`
	Conflicts []conflictJSON `json:"conflicts,omitempty"`
}

type conflictJSON struct {
	Owner      string `json:"owner"`
	Scope      string `json:"scope"`
	Claim      string `json:"claim"`
	OwnerState string `json:"owner_state"`
	LastSeen   string `json:"last_seen,omitempty"`
	TakeoverAt string `json:"takeover_at,omitempty"`
}

// errorCode is the stable kebab-case name of a failure.
func errorCode(err error) string {
	var (
		ue *usageError
		re *facts.RefusedError
		ce *facts.ConflictError
		nf *facts.NotFoundError
		fu *facts.UsageError
		ee *exitError
	)
	switch {
	case errors.As(err, &ee):
		return "strict-stop"
	case errors.As(err, &ce):
		return "claim-conflict"
	case errors.As(err, &re):
		if re.Code != "" {
			return re.Code
		}
		return "refused"
	case errors.As(err, &ue):
		if ue.Code != "" {
			return ue.Code
		}
		return "usage"
	case errors.As(err, &nf):
		return "not-found"
	case errors.As(err, &fu):
		return "usage"
	case errors.Is(err, worktree.ErrNotRepo):
		return "not-a-repository"
	}
	if strings.HasPrefix(err.Error(), "unknown command ") {
		return "unknown-command"
	}
	if isCobraUsage(err.Error()) {
		return "usage"
	}
	return "error"
}

// printErrorJSON prints the error object when the command line asked for
// JSON. A --query applies to it too (--query error.code).
func (f *factory) printErrorJSON(args []string, err error, code int, msg, hint string) {
	j := jsonFromArgs(args)
	var ee *exitError
	if !j.on() || errors.As(err, &ee) || (j.query != "" && validQuery(j.query) != nil) {
		return
	}
	e := errorJSON{Exit: code, Code: errorCode(err), Message: facts.Sanitize(msg, 2000), Hints: []string{}}
	for _, h := range strings.Split(hint, "\n") {
		if h != "" {
			e.Hints = append(e.Hints, facts.Sanitize(h, 2000))
		}
	}
	var ce *facts.ConflictError
	if errors.As(err, &ce) {
		all := ce.All
		if len(all) == 0 {
			all = []*facts.ConflictError{ce}
		}
		for _, c := range all {
			cj := conflictJSON{Owner: c.Owner.String(), Scope: c.Scope, Claim: c.ClaimID, OwnerState: c.State}
			if !c.LastSeen.IsZero() {
				cj.LastSeen = facts.FormatTime(c.LastSeen)
				cj.TakeoverAt = facts.FormatTime(c.TakeoverAt)
			}
			e.Conflicts = append(e.Conflicts, cj)
		}
	}
	f.printJSON(&j, map[string]any{"error": e})
}

// jsonFromArgs reads --json and --query from the raw arguments, so the
// error object is printed even when flag parsing is what failed.
func jsonFromArgs(args []string) jsonFlags {
	var j jsonFlags
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return j
		case a == "--json" || a == "--json=true":
			j.json = true
		case a == "--query" && i+1 < len(args):
			j.query = args[i+1]
			i++
		case strings.HasPrefix(a, "--query="):
			j.query = strings.TrimPrefix(a, "--query=")
		}
	}
	return j
}

// checkQuery refuses a --query that is not a gjson path before the
// command runs, so a bad query never follows a write.
func checkQuery(c *cobra.Command, args []string) error {
	fl := c.Flags().Lookup("query")
	if fl == nil || fl.Value.String() == "" {
		return nil
	}
	return validQuery(fl.Value.String())
}

// validQuery checks what gjson cannot tell from a miss: brackets, braces
// and parentheses that close in order, quotes that end, no trailing
// escape. gjson answers a broken path with "nothing", which would pass
// for an empty result.
func validQuery(q string) error {
	bad := func(why string) error {
		return &usageError{Code: "bad-query", Msg: "bad --query " + quote(q) + ": " + why,
			Hint: "a gjson path: --query claims.0.id, --query 'claims.#(tool==\"a\").id', --query 'handoffs.#'"}
	}
	var stack []byte
	inStr := false
	for i := 0; i < len(q); i++ {
		ch := q[i]
		if ch == '\\' {
			if i+1 == len(q) {
				return bad("it ends in a backslash")
			}
			i++
			continue
		}
		if inStr {
			if ch == '"' {
				inStr = false
			}
			continue
		}
		switch ch {
		case '"':
			if len(stack) > 0 {
				inStr = true
			}
		case '(', '[', '{':
			stack = append(stack, ch)
		case ')', ']', '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[ch]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return bad("unbalanced " + string(ch))
			}
			stack = stack[:len(stack)-1]
		}
	}
	if inStr {
		return bad("a quote does not end")
	}
	if len(stack) > 0 {
		return bad("unclosed " + string(stack[len(stack)-1]))
	}
	if strings.TrimSpace(q) == "" || strings.HasSuffix(q, ".") || strings.HasPrefix(q, ".") {
		return bad("an empty path segment")
	}
	_ = gjson.Get("{}", q) // must not panic on anything that passed
	return nil
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
