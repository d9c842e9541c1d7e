package sshsig

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/git-rally/git-rally/refs"
)

// KeySigner is the refs.Signer of rally.sign: it signs in namespace "git" with the key git's user.signingKey
// names: a private key file, a public key file or a "key::" literal whose
// private half ssh-agent holds (SSH_AUTH_SOCK). No process is started.
type KeySigner struct {
	Key       string // user.signingKey
	AgentSock string // $SSH_AUTH_SOCK

	once   sync.Once
	signer ssh.Signer
	err    error
}

// Ready loads the key once.
func (s *KeySigner) Ready() error {
	s.once.Do(func() { s.signer, s.err = s.load() })
	return s.err
}

// Sign signs payload.
func (s *KeySigner) Sign(payload []byte) ([]byte, error) {
	if err := s.Ready(); err != nil {
		return nil, err
	}
	sig, err := Sign(s.signer, "git", payload)
	if err != nil {
		return nil, &refs.KeyError{Msg: fmt.Sprintf("signing with %s: %v", s.Key, err),
			Hint: "ssh-add -l   # is the key still in the agent?"}
	}
	return sig, nil
}

// PublicKey returns the signing key's public half, once Ready succeeded.
func (s *KeySigner) PublicKey() ssh.PublicKey {
	if s.Ready() != nil {
		return nil
	}
	return s.signer.PublicKey()
}

// Public is PublicKey as a refs.KeyHolder: the facts about to be signed
// are checked against the allowed-signers file before anything is written.
func (s *KeySigner) Public() (refs.PublicKey, error) {
	if err := s.Ready(); err != nil {
		return nil, err
	}
	return s.signer.PublicKey(), nil
}

const keyHint = "git config user.signingKey ~/.ssh/id_ed25519.pub   # and ssh-add ~/.ssh/id_ed25519, or git config rally.sign false"

func (s *KeySigner) load() (ssh.Signer, error) {
	spec := strings.TrimSpace(s.Key)
	if spec == "" {
		return nil, &refs.KeyError{Msg: "no signing key: user.signingKey is not set", Hint: keyHint}
	}
	if lit, ok := strings.CutPrefix(spec, "key::"); ok {
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(lit))
		if err != nil {
			return nil, &refs.KeyError{Msg: fmt.Sprintf("user.signingKey %q is not an ssh public key: %v", spec, err), Hint: keyHint}
		}
		return s.fromAgent(pub, "the key of user.signingKey")
	}
	path := refs.ExpandHome(spec)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &refs.KeyError{Msg: fmt.Sprintf("cannot read the signing key: %v", err), Hint: keyHint}
	}
	if pub, _, _, _, err := ssh.ParseAuthorizedKey(data); err == nil {
		return s.fromAgent(pub, path)
	}
	raw, err := ssh.ParseRawPrivateKey(data)
	if err == nil {
		if k, ok := raw.(*ed25519.PrivateKey); ok {
			return NewEd25519Signer(*k)
		}
		var signer ssh.Signer
		if signer, err = ssh.NewSignerFromKey(raw); err == nil {
			return signer, nil
		}
	}
	var pm *ssh.PassphraseMissingError
	if errors.As(err, &pm) {
		pub := pm.PublicKey
		if pub == nil {
			if b, err := os.ReadFile(path + ".pub"); err == nil {
				pub, _, _, _, _ = ssh.ParseAuthorizedKey(b)
			}
		}
		if pub != nil {
			if sg, err := s.fromAgent(pub, path); err == nil {
				return sg, nil
			}
		}
		return nil, &refs.KeyError{Msg: fmt.Sprintf("the signing key %s is locked by a passphrase and not in ssh-agent", path),
			Hint: "ssh-add " + path}
	}
	return nil, &refs.KeyError{Msg: fmt.Sprintf("the signing key %s is not an ssh key: %v", path, err), Hint: keyHint}
}

func (s *KeySigner) fromAgent(pub ssh.PublicKey, what string) (ssh.Signer, error) {
	if s.AgentSock == "" {
		return nil, &refs.KeyError{Msg: fmt.Sprintf("%s is a public key and SSH_AUTH_SOCK is not set: no ssh-agent to sign with", what),
			Hint: "eval \"$(ssh-agent)\" && ssh-add <private key>"}
	}
	conn, err := net.Dial("unix", s.AgentSock)
	if err != nil {
		return nil, &refs.KeyError{Msg: fmt.Sprintf("cannot reach ssh-agent: %v", err), Hint: "eval \"$(ssh-agent)\" && ssh-add <private key>"}
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, &refs.KeyError{Msg: fmt.Sprintf("ssh-agent: %v", err), Hint: "ssh-add -l"}
	}
	want := pub.Marshal()
	for _, sg := range signers {
		if bytes.Equal(sg.PublicKey().Marshal(), want) {
			return sg, nil // the connection stays open for the process's signatures
		}
	}
	conn.Close()
	return nil, &refs.KeyError{Msg: fmt.Sprintf("ssh-agent does not hold %s (%s)", what, ssh.FingerprintSHA256(pub)),
		Hint: "ssh-add <private key>"}
}
