package refs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Signer signs ledger commits. Sign returns the armored signature of a
// commit's bytes without its gpgsig header; WriteCommit puts it in that
// header, as git commit -S does.
type Signer interface {
	// Ready loads the key; an error means nothing may be written.
	Ready() error
	Sign(payload []byte) ([]byte, error)
}

// KeyError is a signing key that cannot be used: missing, unreadable,
// locked, or not in the agent. Nothing was written.
type KeyError struct{ Msg, Hint string }

func (e *KeyError) Error() string { return e.Msg }

// SSHCode is the SSH signature code rally uses: package sshsig, over
// golang.org/x/crypto/ssh, installs it in SSH from its init. Packages
// refs and facts reach it only through SSH so that they do not import
// the SSH library: a hook answered before cobra initialises (package
// early) starts sooner without it and its dependencies, and falls back to
// the whole command line when signing or verification is configured.
type SSHCode interface {
	// NewSigner is the signer of user.signingKey: a private key file, a
	// public key file or a "key::" literal whose private half ssh-agent
	// (agentSock) holds. The key is loaded at its first use.
	NewSigner(key, agentSock string) Signer
	// ParseKey reads a public key in authorized_keys form.
	ParseKey(line []byte) (PublicKey, error)
	// KeyLine is k in authorized_keys form, ending in a newline.
	KeyLine(k PublicKey) []byte
	// Check verifies an armored SSH signature of payload in namespace
	// "git" and returns its key; ok is false when it does not verify.
	Check(armored, payload []byte) (k PublicKey, ok bool)
	// ParseAllowedSigners reads git's allowed-signers file format.
	ParseAllowedSigners(data []byte) (AllowedSigners, []error)
}

// PublicKey is an SSH public key (an ssh.PublicKey).
type PublicKey interface {
	// Marshal is the key in the SSH wire format.
	Marshal() []byte
}

// AllowedSigners says which key may sign as whom.
type AllowedSigners interface {
	// Allows reports whether k may sign as principal in namespace at.
	Allows(principal string, k PublicKey, namespace string, at time.Time) bool
	// Lists reports whether k is listed for anyone in namespace at.
	Lists(k PublicKey, namespace string, at time.Time) bool
}

// SSH is the installed SSHCode; nil until package sshsig initialises.
var SSH SSHCode

// ErrNoSSH is the error of a signing or verification asked for in a
// process where package sshsig is not linked (a bug of the caller).
var ErrNoSSH = errors.New("internal: SSH signatures asked for, but package sshsig is not linked in")

// ExpandHome expands a leading ~/ to the home directory, as git does for
// path-valued settings.
func ExpandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// KeyHolder is a Signer that can name its public key (once Ready), so a
// write can be checked against the allowed-signers file before it is
// made.
type KeyHolder interface {
	Public() (PublicKey, error)
}
