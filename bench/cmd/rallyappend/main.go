// Command rallyappend is the cold append and nothing more: a static binary
// that opens the ledger of the repository it runs in (its .git, no
// discovery), appends one claim and exits. bench/run.sh installs it as
// git-rallyappend and times `git rallyappend <file> <tool>` beside `git
// rally claim <file>`: the difference is what git-rally adds to an append
// (its packages' initialisation, cobra, discovery, the command), apart from
// what any new process pays to append (bench/README.md).
//
//	rallyappend <file> <tool>
package main

import (
	"fmt"
	"os"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rallyappend:", err)
		os.Exit(1)
	}
}

// run appends a claim of file:<file> by <tool> to the ledger in ./.git.
func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: rallyappend <file> <tool>")
	}
	l, err := ledger.Open(".git", nil)
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = l.Append(facts.Claim(facts.ClaimRequest{Owner: facts.Owner{Tool: args[1]}, Scopes: []string{"file:" + args[0]}}))
	return err
}
