package ledger_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// BenchmarkAppendSigned is BenchmarkAppend's claim at 1k facts unsigned
// and signed (rally.sign, an ed25519 key file read by each Open, as each
// process reads it). Bar (issue 18): signed ≤ 1.15x unsigned; bench/run.sh
// times the same as whole processes.
func BenchmarkAppendSigned(b *testing.B) {
	common := benchLedger(b, 1000)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "bench")
	key := filepath.Join(b.TempDir(), "key")
	if err := os.WriteFile(key, pem.EncodeToMemory(block), 0o600); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Dir(common)
	for _, kv := range [][2]string{{"user.signingKey", key}, {"rally.sign", "false"}} {
		if _, err := refs.Git(dir, nil, "config", kv[0], kv[1]); err != nil {
			b.Fatal(err)
		}
	}
	for _, signed := range []bool{false, true} {
		name := map[bool]string{false: "unsigned", true: "signed"}[signed]
		if _, err := refs.Git(dir, nil, "config", "rally.sign", map[bool]string{false: "false", true: "true"}[signed]); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				l, err := ledger.Open(common, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.Append(claimFn(i)); err != nil {
					b.Fatal(err)
				}
				l.Close()
			}
		})
	}
}
