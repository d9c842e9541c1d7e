package sshsig

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

const (
	magic      = "SSHSIG"
	version    = 1
	armorBegin = "-----BEGIN SSH SIGNATURE-----"
	armorEnd   = "-----END SSH SIGNATURE-----"
	// HashSHA512 is the message hash ssh-keygen -Y sign uses by default.
	HashSHA512 = "sha512"
	HashSHA256 = "sha256"
)

// Signature is a parsed SSHSIG signature.
type Signature struct {
	PublicKey ssh.PublicKey
	Namespace string
	HashAlg   string
	Sig       *ssh.Signature
}

// ErrBadSignature is returned when a signature does not verify.
var ErrBadSignature = errors.New("ssh signature does not verify")

func hashMessage(alg string, msg []byte) ([]byte, error) {
	switch alg {
	case HashSHA512:
		h := sha512.Sum512(msg)
		return h[:], nil
	case HashSHA256:
		h := sha256.Sum256(msg)
		return h[:], nil
	}
	return nil, fmt.Errorf("ssh signature: unsupported hash %q", alg)
}

func appendString(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// signedData is the blob the key signs: the preamble, the namespace, an
// empty reserved field, the hash algorithm and the message's hash.
func signedData(namespace, alg string, msg []byte) ([]byte, error) {
	h, err := hashMessage(alg, msg)
	if err != nil {
		return nil, err
	}
	b := []byte(magic)
	b = appendString(b, []byte(namespace))
	b = appendString(b, nil)
	b = appendString(b, []byte(alg))
	return appendString(b, h), nil
}

// Sign signs msg in namespace (git signs commits in "git") and returns the
// armored signature, as ssh-keygen -Y sign writes it. RSA keys sign with
// rsa-sha2-512: SSHSIG does not accept SHA-1 signatures.
func Sign(s ssh.Signer, namespace string, msg []byte) ([]byte, error) {
	data, err := signedData(namespace, HashSHA512, msg)
	if err != nil {
		return nil, err
	}
	var sig *ssh.Signature
	if as, ok := s.(ssh.AlgorithmSigner); ok && s.PublicKey().Type() == ssh.KeyAlgoRSA {
		sig, err = as.SignWithAlgorithm(rand.Reader, data, ssh.KeyAlgoRSASHA512)
	} else {
		sig, err = s.Sign(rand.Reader, data)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh signature: %w", err)
	}
	b := []byte(magic)
	b = binary.BigEndian.AppendUint32(b, version)
	b = appendString(b, s.PublicKey().Marshal())
	b = appendString(b, []byte(namespace))
	b = appendString(b, nil)
	b = appendString(b, []byte(HashSHA512))
	b = appendString(b, ssh.Marshal(sig))
	return armor(b), nil
}

func armor(b []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(b)
	var out bytes.Buffer
	out.WriteString(armorBegin + "\n")
	for len(enc) > 70 {
		out.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	out.WriteString(enc + "\n" + armorEnd + "\n")
	return out.Bytes()
}

// IsArmored reports whether b starts like an armored SSH signature (git
// tells signature formats apart the same way).
func IsArmored(b []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(armorBegin))
}

// Parse reads an armored signature.
func Parse(armored []byte) (*Signature, error) {
	s := strings.TrimSpace(string(armored))
	if !strings.HasPrefix(s, armorBegin) || !strings.HasSuffix(s, armorEnd) {
		return nil, errors.New("ssh signature: not an armored SSH signature")
	}
	body := strings.Join(strings.Fields(s[len(armorBegin):len(s)-len(armorEnd)]), "")
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, fmt.Errorf("ssh signature: %w", err)
	}
	var w struct {
		Magic     [6]byte
		Version   uint32
		PublicKey []byte
		Namespace string
		Reserved  string
		HashAlg   string
		Signature []byte
	}
	if err := ssh.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("ssh signature: %w", err)
	}
	if string(w.Magic[:]) != magic || w.Version != version {
		return nil, errors.New("ssh signature: bad preamble or version")
	}
	pub, err := ssh.ParsePublicKey(w.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("ssh signature: %w", err)
	}
	sig := new(ssh.Signature)
	if err := ssh.Unmarshal(w.Signature, sig); err != nil {
		return nil, fmt.Errorf("ssh signature: %w", err)
	}
	return &Signature{PublicKey: pub, Namespace: w.Namespace, HashAlg: w.HashAlg, Sig: sig}, nil
}

// Verify checks that s signs msg in namespace with s.PublicKey. Whether that
// key may sign for anyone is the allowed-signers file's question.
func (s *Signature) Verify(namespace string, msg []byte) error {
	if s.Namespace != namespace {
		return fmt.Errorf("%w: namespace %q, want %q", ErrBadSignature, s.Namespace, namespace)
	}
	if s.Sig.Format == ssh.KeyAlgoRSA {
		return fmt.Errorf("%w: SHA-1 RSA signatures are not accepted", ErrBadSignature)
	}
	data, err := signedData(s.Namespace, s.HashAlg, msg)
	if err != nil {
		return err
	}
	if err := s.PublicKey.Verify(data, s.Sig); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return nil
}
