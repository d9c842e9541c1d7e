package cli

import (
	"errors"
	"testing"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

// cobra's flag-group errors are usage errors (exit 2), like every other
// flag mistake.
func TestFlagGroupErrorsAreUsage(t *testing.T) {
	for _, msg := range []string{
		"at least one of the flags in the group [handoff text] is required",
		"if any flags in the group [a b] are set they must all be set; missing [b]",
		"if any flags in the group [a b] are set none of the others can be; [a b] were all set",
	} {
		if code, _, _ := cmdutil.Classify(errors.New(msg)); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", msg, code, ExitUsage)
		}
	}
}
