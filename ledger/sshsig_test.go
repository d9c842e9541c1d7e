package ledger

// The signing tests need package sshsig's refs.SSH, as the command line
// links it in.
import _ "github.com/git-rally/git-rally/sshsig"
