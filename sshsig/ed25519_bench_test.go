package sshsig

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFirstSignChild is BenchmarkFirstSign's child process: it signs once
// (the first signature in the process, which pays for whatever the
// signer sets up) and prints the nanoseconds it took.
func TestFirstSignChild(t *testing.T) {
	which := os.Getenv("RALLY_FIRST_SIGN")
	if which == "" {
		t.Skip("BenchmarkFirstSign's child")
	}
	// The key as a process reads it from its file: seed and public key,
	// no computation (GenerateKey would build the table first).
	priv, err := hex.DecodeString(os.Getenv("RALLY_FIRST_SIGN_KEY"))
	if err != nil || len(priv) != ed25519.PrivateKeySize {
		t.Fatalf("RALLY_FIRST_SIGN_KEY: %v", err)
	}
	msg := []byte("a fact's commit, about 300 bytes")
	start := time.Now()
	switch which {
	case "stdlib":
		ed25519.Sign(priv, msg)
	case "rally":
		signEd25519(priv, msg)
	}
	fmt.Printf("first-sign-ns %d\n", time.Since(start).Nanoseconds())
}

// BenchmarkFirstSign is the first signature of a process, what every
// short-lived git-rally process that signs pays: crypto/ed25519 (its
// fixed-base table built on first use) against the variable-base signer
// (NewEd25519Signer). It reports the child's median first-sign time;
// compare it with a signed append (ledger.BenchmarkAppendSigned).
func BenchmarkFirstSign(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	for _, which := range []string{"stdlib", "rally"} {
		b.Run(which, func(b *testing.B) {
			var ns []float64
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFirstSignChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), "RALLY_FIRST_SIGN="+which, "RALLY_FIRST_SIGN_KEY="+hex.EncodeToString(priv))
				out, err := cmd.Output()
				if err != nil {
					b.Fatal(err, string(out))
				}
				f := strings.Fields(string(out))
				if len(f) < 2 || f[0] != "first-sign-ns" {
					b.Fatalf("child said %q", out)
				}
				n, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					b.Fatalf("child said %q", out)
				}
				ns = append(ns, n)
			}
			sort.Float64s(ns)
			b.ReportMetric(ns[len(ns)/2], "first-sign-ns")
		})
	}
}

// BenchmarkSign is a signature once the process has signed before.
func BenchmarkSign(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	msg := []byte("a fact's commit, about 300 bytes")
	b.Run("stdlib", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ed25519.Sign(priv, msg)
		}
	})
	b.Run("rally", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			signEd25519(priv, msg)
		}
	})
}
