package sshsig

import (
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-rally/git-rally/refs"
)

// Linking this package in installs it as refs.SSH.
func init() { refs.SSH = code{} }

// code is refs.SSHCode over golang.org/x/crypto/ssh.
type code struct{}

func (code) NewSigner(key, agentSock string) refs.Signer {
	return &KeySigner{Key: key, AgentSock: agentSock}
}

func (code) ParseKey(line []byte) (refs.PublicKey, error) {
	pub, _, _, _, err := ssh.ParseAuthorizedKey(line)
	if err != nil {
		return nil, err
	}
	return pub, nil
}

func (code) KeyLine(k refs.PublicKey) []byte { return ssh.MarshalAuthorizedKey(k.(ssh.PublicKey)) }

func (code) Check(armored, payload []byte) (refs.PublicKey, bool) {
	sig, err := Parse(armored)
	if err != nil || sig.Verify("git", payload) != nil {
		return nil, false
	}
	return sig.PublicKey, true
}

func (code) ParseAllowedSigners(data []byte) (refs.AllowedSigners, []error) {
	as, errs := ParseAllowedSigners(data)
	return allowed{as}, errs
}

// allowed is refs.AllowedSigners over AllowedSigners.
type allowed struct{ as AllowedSigners }

func (a allowed) Allows(principal string, k refs.PublicKey, namespace string, at time.Time) bool {
	pub, ok := k.(ssh.PublicKey)
	return ok && a.as.Allows(principal, pub, namespace, at)
}

func (a allowed) Lists(k refs.PublicKey, namespace string, at time.Time) bool {
	pub, ok := k.(ssh.PublicKey)
	return ok && a.as.Lists(pub, namespace, at)
}
