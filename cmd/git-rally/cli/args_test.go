package cli

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

// Every argument check in the tree refuses with a usageError in rally's
// voice, never one of cobra's sentences, and Classify reads no message
// text: an untyped error is a plain failure (exit 1), whatever it says.
func TestArgsErrorsAreTyped(t *testing.T) {
	root := newRootCmd(newFactory(strings.NewReader(""), io.Discard, io.Discard))
	many := strings.Fields("a b c d e f g h i j k l m n o p q r s t")
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Args == nil || !c.HasParent() {
			return
		}
		for _, args := range [][]string{nil, many} {
			err := c.Args(c, args)
			if err == nil {
				continue
			}
			checked++
			var ue *usageError
			if !errors.As(err, &ue) || ue.Hint == "" || strings.Contains(ue.Msg, "arg(s)") {
				t.Errorf("%s with %d arguments: %T %q, want a usageError with a hint", c.CommandPath(), len(args), err, err)
			}
		}
	}
	walk(root)
	if checked < 20 {
		t.Fatalf("only %d refusals checked", checked)
	}
	for _, msg := range []string{"invalid argument", "accepts 0 arg(s), received 1", "unknown flag: --x", "requires at least 1 arg(s), only received 0"} {
		if code, _, _ := cmdutil.Classify(errors.New(msg)); code != ExitError {
			t.Errorf("Classify(%q) = %d, want %d: no classification by message text", msg, code, ExitError)
		}
	}
}
