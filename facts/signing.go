package facts

import (
	"os"

	"github.com/git-rally/git-rally/refs"
)

// Signing is what the repository's git configuration says about signed
// facts (SPEC §17).
type Signing struct {
	// Sign: rally.sign. Every ledger commit is signed with user.signingKey.
	Sign bool
	// Require: rally.requireSigned. Projections ignore other tools' facts
	// that are not verified, and this clone appends only signed commits.
	Require bool
	// AllowedSigners: rally.allowedSigners, else gpg.ssh.allowedSignersFile.
	AllowedSigners string
}

// Verifying reports whether verdicts are computed: signing or an
// allowed-signers file is configured. Without either, no fact could be
// verified, and a ledger nobody signs is not walked for its signatures.
func (s Signing) Verifying() bool { return s.Sign || s.Require || s.AllowedSigners != "" }

// configureSigning reads the signing settings and gives the store its
// signer; the key itself is loaded at the first commit.
func (l *Ledger) configureSigning(commonDir string) {
	cfg := refs.ReadConfig(commonDir, "")
	l.Signing = Signing{
		Sign:           cfg.Bool("rally.sign"),
		Require:        cfg.Bool("rally.requireSigned"),
		AllowedSigners: cfg.Path("rally.allowedSigners"),
	}
	if l.Signing.AllowedSigners == "" {
		l.Signing.AllowedSigners = cfg.Path("gpg.ssh.allowedSignersFile")
	}
	if l.Signing.Sign {
		l.Store.Signer = &refs.SSHSigner{Key: cfg.Get("user.signingKey"), AgentSock: os.Getenv("SSH_AUTH_SOCK")}
	}
}

// checkCanWrite is the signing gate of every ledger commit: a key that
// cannot sign, or an unsigned write where signatures are required, stops
// it before anything is written.
// A merge adds no fact of this clone's, so it is not refused unsigned.
func (l *Ledger) checkCanWrite(appending bool) error {
	if l.Store.Signer != nil {
		return l.Store.Signer.Ready()
	}
	if l.Signing.Require && appending {
		return &RefusedError{Msg: "rally.requireSigned is set and rally.sign is not: this clone appends only signed facts",
			Hint: "git config rally.sign true   # with user.signingKey set to your ssh key"}
	}
	return nil
}
