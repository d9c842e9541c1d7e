package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/refs"
)

func newCmdDemo(f *factory) *cobra.Command {
	var keep bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "Play the whole protocol in a throw-away repository",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runDemo(f, keep) },
	}
	c.Flags().BoolVar(&keep, "keep", false, "keep the repository and print its path")
	return c
}

type demoStep struct {
	say  string
	env  []string
	args []string
	want int
}

func runDemo(f *factory, keep bool) error {
	dir, err := os.MkdirTemp("", "git-rally-demo-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	if _, err := refs.Git(dir, nil, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	for _, p := range []string{"src/api.ts", "src/ui/app.tsx", "README.md"} {
		os.MkdirAll(dir+"/"+dirname(p), 0o777)
		os.WriteFile(dir+"/"+p, []byte("// "+p+"\n"), 0o666)
	}
	for _, k := range []string{"RALLY_SESSION", "RALLY_TOOL", "GIT_DIR", "GIT_WORK_TREE"} {
		if v, ok := os.LookupEnv(k); ok {
			os.Unsetenv(k)
			defer os.Setenv(k, v)
		}
	}
	if v, ok := os.LookupEnv("RALLY_NOW"); ok {
		defer os.Setenv("RALLY_NOW", v)
	}
	old, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		return err
	}
	defer os.Chdir(old)
	t0 := "2026-01-05T09:00:00Z"
	at := func(min int) []string {
		return []string{fmt.Sprintf("RALLY_NOW=2026-01-05T09:%02d:00Z", min)}
	}
	_ = t0
	steps := []demoStep{
		{"set up the room: the ledger lives on refs/rally/ledger", at(0), []string{"init"}, 0},
		{"claude enters", at(0), []string{"enter", "--tool", "claude_code:impl-1", "--subject", "building the API"}, 0},
		{"codex enters", at(1), []string{"enter", "--tool", "codex:verify-1", "--subject", "writing tests"}, 0},
		{"claude claims the API file", at(2), []string{"claim", "src/api.ts", "--tool", "claude_code:impl-1", "--subject", "new endpoint"}, 0},
		{"codex claims the UI directory", at(3), []string{"claim", "src/ui/", "--tool", "codex:verify-1"}, 0},
		{"codex reaches for the API file too: refused, nothing written (exit 3)", at(4), []string{"claim", "src/api.ts", "--tool", "codex:verify-1"}, 3},
		{"the write check says stop for codex, and why", at(4), []string{"check", "before-write", "src/api.ts", "--tool", "codex:verify-1"}, 0},
		{"claude hands the endpoint's tests to codex, reply within 30 minutes", at(5), []string{"handoff", "--tool", "claude_code:impl-1", "--target", "codex:verify-1", "--subject", "test the new endpoint", "--file", "src/api.ts", "--ack-within", "30m"}, 0},
		{"codex's inbox", at(6), []string{"inbox", "--tool", "codex:verify-1"}, 0},
		{"codex acknowledges (arrived, not done)", at(7), []string{"receipt", "HANDOFF", "--tool", "codex:verify-1"}, 0},
		{"codex writes a wrong note...", at(8), []string{"note", "--tool", "codex:verify-1", "--subject", "api.ts uses port 8080"}, 0},
		{"...and retracts it; the log keeps it, the room ignores it", at(9), []string{"retract", "NOTE", "--tool", "codex:verify-1", "--reason", "it is 8443"}, 0},
		{"claude is done and releases", at(10), []string{"release", "src/api.ts", "--tool", "claude_code:impl-1"}, 0},
		{"the room", at(11), []string{"room"}, 0},
		{"the history, as git sees it", nil, nil, 0},
	}
	ids := map[string]string{}
	for i, s := range steps {
		fmt.Fprintf(f.out, "\n== %d. %s\n", i+1, s.say)
		if s.args == nil {
			out, _ := refs.Git(dir, nil, "log", "--oneline", "refs/rally/ledger")
			fmt.Fprint(f.out, out)
			continue
		}
		args := make([]string, len(s.args))
		for k, a := range s.args {
			if id, ok := ids[a]; ok {
				a = id
			}
			args[k] = a
		}
		fmt.Fprintf(f.out, "$ %sgit rally %s\n", strings.Join(s.env, " ")+" ", strings.Join(quoteArgs(args), " "))
		for _, e := range s.env {
			k, v, _ := strings.Cut(e, "=")
			os.Setenv(k, v)
		}
		var out, errb bytes.Buffer
		code := Run(args, strings.NewReader(""), &out, &errb)
		fmt.Fprint(f.out, indent(out.String()))
		fmt.Fprint(f.out, indent(errb.String()))
		if code != s.want {
			return fmt.Errorf("demo step %d exited %d, want %d", i+1, code, s.want)
		}
		if code == 0 && (args[0] == "handoff" || args[0] == "note") {
			ids[strings.ToUpper(args[0])] = strings.Fields(out.String())[0]
		}
		if code != 0 {
			fmt.Fprintf(f.out, "  (exit %d)\n", code)
		} else if isWrite(args[0]) {
			fmt.Fprintf(f.out, "  room now: %s\n", demoRoomLine())
		}
	}
	os.Unsetenv("RALLY_NOW")
	if keep {
		fmt.Fprintf(f.out, "\nthe repository is kept at %s\n", dir)
	} else {
		fmt.Fprintln(f.out, "\ndone; the throw-away repository is removed")
	}
	return nil
}

func isWrite(cmd string) bool {
	switch cmd {
	case "enter", "leave", "claim", "release", "handoff", "receipt", "resolve", "note", "retract":
		return true
	}
	return false
}

// demoRoomLine summarises the room in one line after a step.
func demoRoomLine() string {
	var out bytes.Buffer
	if Run([]string{"room", "--json"}, strings.NewReader(""), &out, io.Discard) != 0 {
		return "?"
	}
	var r roomJSON
	if json.Unmarshal(out.Bytes(), &r) != nil {
		return "?"
	}
	var claims, handoffs []string
	for _, c := range r.Claims {
		claims = append(claims, c.Tool+" "+strings.Join(c.Scopes, ","))
	}
	for _, h := range r.Handoffs {
		handoffs = append(handoffs, h.From+"->"+h.Target+" "+h.State)
	}
	return fmt.Sprintf("%d peers; claims [%s]; handoffs [%s]; %d facts, %d retracted",
		len(r.Peers), strings.Join(claims, "; "), strings.Join(handoffs, "; "), r.Totals.Facts, r.Totals.Retracted)
}

func dirname(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

func quoteArgs(as []string) []string {
	out := make([]string, len(as))
	for i, a := range as {
		if strings.ContainsAny(a, " '\"") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}
