package cli

import (
	"fmt"
	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"io"
	"os"
	"time"

	"github.com/git-rally/git-rally/hooks"
)

// MaxHookInput bounds what a hook reads from its host (a Write carries
// the whole file).
const MaxHookInput = 32 << 20

// HotGCPercent is GOGC for the hot commands: one lives for milliseconds,
// and collecting while it encodes a large room costs more than the memory
// a collection would free (a rebuild lowers it again).
const HotGCPercent = 400

// RunHook answers a hook call: `git-rally hook <host> <event> [args]`,
// the host's JSON on f.In. It fails open; its only error is an
// *cmdutil.ExitError with the code the host's protocol asks for.
func RunHook(f *cmdutil.Factory, args []string) error {
	if len(args) < 2 || (len(args) > 2 && args[0] != hooks.Git) {
		fmt.Fprintln(f.Err, "git-rally: warning: usage: git rally hook <host> <event>; nothing checked")
		return nil
	}
	now, err := f.Now()
	if err != nil {
		now = time.Now().UTC()
	}
	var input []byte
	if args[0] != hooks.Git || args[1] == "pre-push" {
		input = readHookInput(f.In)
	}
	wd, _ := os.Getwd()
	ans := hooks.Handle(hooks.Invocation{Host: args[0], Event: args[1], Input: input, Dir: wd,
		Getenv: os.Getenv, Now: now, Identity: f.Identity, Args: args[2:]})
	f.Out.Write(ans.Stdout)
	f.Err.Write(ans.Stderr)
	if ans.Code != 0 {
		return &cmdutil.ExitError{Code: ans.Code}
	}
	return nil
}

// readHookInput reads the host's JSON; a terminal (someone trying the
// command by hand) gives none rather than a hang.
func readHookInput(in io.Reader) []byte {
	if file, ok := in.(*os.File); ok {
		if fi, err := file.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil
		}
	}
	b, _ := io.ReadAll(io.LimitReader(in, MaxHookInput))
	return b
}
