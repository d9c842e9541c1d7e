package facts

import (
	"fmt"
	"strings"
)

// Activities a status fact records (SPEC §13): what a peer is doing. The
// hooks write the first four from the host's own events; a person or an
// agent declares any but exited with `git rally status`.
const (
	ActivityWorking    = "working"
	ActivityNeedsInput = "needs-input"
	ActivityIdle       = "idle"
	ActivityExited     = "exited"
	ActivityBlocked    = "blocked"
	ActivityReview     = "review"
	ActivityDone       = "done"
)

// DeclaredActivities are the activities `git rally status` accepts.
var DeclaredActivities = []string{ActivityWorking, ActivityNeedsInput, ActivityIdle, ActivityBlocked, ActivityReview, ActivityDone}

// CheckActivity refuses an activity `git rally status` does not accept.
func CheckActivity(a string) error {
	for _, k := range DeclaredActivities {
		if a == k {
			return nil
		}
	}
	return &UsageError{Msg: fmt.Sprintf("unknown activity %q: want one of %s", Sanitize(a, 40), strings.Join(DeclaredActivities, ", ")),
		Hint: "git rally status idle"}
}

// ActivityOf is the owner's latest activity and when it began ("" when
// it never reported one).
func (s *State) ActivityOf(o Owner) (activity, since string) {
	if p := s.Peers[o.String()]; p != nil {
		return p.Activity, p.ActivitySince
	}
	return "", ""
}
