package cmdutil

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
	"github.com/git-rally/git-rally/worktree"
)

// Usagef is a UsageError with a formatted message.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Finish ends a command as every git-rally command ends: the ledger
// closed, its warnings, and err as text and an exit code on stderr (and,
// under --json, as {"error": ...} on stdout).
func (f *Factory) Finish(args []string, err error) int {
	f.Close()
	defer func() {
		if err != nil {
			code, msg, hint := Classify(err)
			f.PrintErrorJSON(args, err, code, msg, hint)
		}
	}()
	for _, w := range f.Warnings() {
		fmt.Fprintf(f.Err, "git-rally: warning: %s\n", w)
	}
	if err == nil {
		return ExitOK
	}
	code, msg, hint := Classify(err)
	if msg != "" {
		fmt.Fprintf(f.Err, "git-rally: error: %s\n", LocalizeTimes(msg, time.Local))
	}
	for _, h := range strings.Split(hint, "\n") {
		if h != "" {
			fmt.Fprintf(f.Err, "git-rally: hint: %s\n", LocalizeTimes(h, time.Local))
		}
	}
	return code
}

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	ExitRefused = 3
	ExitStop    = 4
)

// Classify turns an error into its exit code, message and hint.
func Classify(err error) (int, string, string) {
	var (
		ue *UsageError
		nf *ledger.NotFoundError
		re *facts.RefusedError
		ce *facts.ConflictError
		ee *ExitError
		ge *refs.GitError
		fe *facts.FailedError
		le *refs.LockedError
		ke *refs.KeyError
	)
	switch {
	case errors.As(err, &ee):
		return ee.Code, "", ""
	case errors.As(err, &ue):
		return ExitUsage, ue.Msg, ue.Hint
	case errors.As(err, &ke):
		return ExitUsage, ke.Msg, ke.Hint
	case errors.As(err, &nf):
		return ExitUsage, nf.Error(), "git rally log --json"
	case errors.As(err, &ce):
		return ExitRefused, ce.Error(), ce.Hint
	case errors.As(err, &re):
		return ExitRefused, re.Msg, re.Hint
	case errors.Is(err, worktree.ErrNotRepo):
		return ExitFailure, err.Error(), "run git rally inside a git repository, or `git init` one"
	case errors.As(err, &fe):
		return ExitFailure, err.Error(), fe.Hint
	case errors.As(err, &le):
		return ExitFailure, le.Error(), le.Hint()
	case errors.As(err, &ge):
		return ExitFailure, err.Error(), ""
	}
	return ExitFailure, err.Error(), ""
}

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
		ue *UsageError
		re *facts.RefusedError
		ce *facts.ConflictError
		nf *ledger.NotFoundError
		ee *ExitError
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
	case errors.Is(err, worktree.ErrNotRepo):
		return "not-a-repository"
	}
	return "error"
}

// printErrorJSON prints the error object when the command line asked for
// JSON. A --query applies to it too (--query error.code).
func (f *Factory) PrintErrorJSON(args []string, err error, code int, msg, hint string) {
	j := jsonFromArgs(args)
	var ee *ExitError
	var ae *AnsweredError
	if !j.On() || errors.As(err, &ee) || errors.As(err, &ae) || (j.Query != "" && ValidQuery(j.Query) != nil) {
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
	f.PrintJSON(&j, map[string]any{"error": e})
}

// jsonFromArgs reads --json and --query from the raw arguments, so the
// error object is printed even when flag parsing is what failed.
func jsonFromArgs(args []string) JSONFlags {
	var j JSONFlags
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return j
		case a == "--json" || a == "--json=true":
			j.JSON = true
		case a == "--query" && i+1 < len(args):
			j.Query = args[i+1]
			i++
		case strings.HasPrefix(a, "--query="):
			j.Query = strings.TrimPrefix(a, "--query=")
		}
	}
	return j
}

// validQuery checks what gjson cannot tell from a miss: brackets, braces
// and parentheses that close in order, quotes that end, no trailing
// escape. gjson answers a broken path with "nothing", which would pass
// for an empty result.
func ValidQuery(q string) error {
	bad := func(why string) error {
		return &UsageError{Code: "bad-query", Msg: "bad --query " + quote(q) + ": " + why,
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
