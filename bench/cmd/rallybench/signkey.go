package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"

	"golang.org/x/crypto/ssh"
)

// writeSigningKey writes a throw-away ed25519 private key in OpenSSH
// format for the signed-claim case, once; it returns its path.
func writeSigningKey(p string) (string, error) {
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, "rallybench")
	if err != nil {
		return "", err
	}
	return p, os.WriteFile(p, pem.EncodeToMemory(block), 0o600)
}
