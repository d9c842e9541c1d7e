package sshsig

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignVerify(t *testing.T) {
	s := newSigner(t)
	msg := []byte("tree 0123\n\nclaim\n")
	arm, err := Sign(s, "git", msg)
	if err != nil {
		t.Fatal(err)
	}
	if !IsArmored(arm) {
		t.Fatalf("not armored: %s", arm)
	}
	sig, err := Parse(arm)
	if err != nil {
		t.Fatal(err)
	}
	if err := sig.Verify("git", msg); err != nil {
		t.Fatalf("verify: %v", err)
	}
	if err := sig.Verify("git", append(msg, 'x')); err == nil {
		t.Fatal("a changed message verified")
	}
	if err := sig.Verify("file", msg); err == nil {
		t.Fatal("another namespace verified")
	}
	if string(sig.PublicKey.Marshal()) != string(s.PublicKey().Marshal()) {
		t.Fatal("signature names another key")
	}
}

// What ssh-keygen signs, Verify accepts, and what Sign writes, ssh-keygen
// -Y verify accepts with an allowed-signers file.
func TestInteropSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ssh-keygen missing in CI")
		}
		t.Skip("no ssh-keygen")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("ssh-keygen", args...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("", "-q", "-t", "ed25519", "-N", "", "-f", key)
	msg := "hello rally\n"
	os.WriteFile(filepath.Join(dir, "msg"), []byte(msg), 0o666)
	run("", "-Y", "sign", "-n", "git", "-f", key, filepath.Join(dir, "msg"))
	arm, _ := os.ReadFile(filepath.Join(dir, "msg.sig"))
	sig, err := Parse(arm)
	if err != nil {
		t.Fatal(err)
	}
	if err := sig.Verify("git", []byte(msg)); err != nil {
		t.Fatalf("ssh-keygen's signature: %v", err)
	}

	pem, _ := os.ReadFile(key)
	s, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Sign(s, "git", []byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ours.sig"), ours, 0o666)
	pub, _ := os.ReadFile(key + ".pub")
	os.WriteFile(filepath.Join(dir, "allowed"), []byte("codex:* "+string(pub)), 0o666)
	out := run(msg, "-Y", "verify", "-n", "git", "-f", filepath.Join(dir, "allowed"), "-I", "codex:a1", "-s", filepath.Join(dir, "ours.sig"))
	if !strings.Contains(out, "Good \"git\" signature") {
		t.Fatalf("ssh-keygen -Y verify: %s", out)
	}
}

func TestAllowedSigners(t *testing.T) {
	a, b := newSigner(t), newSigner(t)
	line := func(p, opts string, s ssh.Signer) string {
		return p + " " + opts + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey()))) + " comment\n"
	}
	data := "# team\n\n" +
		line("codex:*,!codex:ci", "", a) +
		line(`"claude_code:impl-1,claude_code:impl-2"`, `namespaces="git,file" `, b) +
		line("gemini:*", `valid-after="20260101",valid-before="20260201Z" `, b) +
		"bogus line\n"
	as, errs := ParseAllowedSigners([]byte(data))
	if len(as) != 3 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 6") {
		t.Fatalf("parsed %d lines, errors %v", len(as), errs)
	}
	at := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		who  string
		key  ssh.Signer
		ns   string
		at   time.Time
		want bool
	}{
		{"codex:a1", a, "git", at, true},
		{"codex:ci", a, "git", at, false},
		{"codex:a1", b, "git", at, false},
		{"claude_code:impl-2", b, "git", at, true},
		{"claude_code:impl-3", b, "git", at, false},
		{"claude_code:impl-1", b, "other", at, false},
		{"gemini:x", b, "git", at, true},
		{"gemini:x", b, "git", at.AddDate(0, -1, 0), false},
		{"gemini:x", b, "git", at.AddDate(0, 1, 0), false},
	} {
		if got := as.Allows(c.who, c.key.PublicKey(), c.ns, c.at); got != c.want {
			t.Errorf("Allows(%s, %s, %s) = %v, want %v", c.who, ssh.FingerprintSHA256(c.key.PublicKey()), c.ns, got, c.want)
		}
	}
	if !as.Lists(a.PublicKey(), "git", at) || as.Lists(newSigner(t).PublicKey(), "git", at) {
		t.Error("Lists")
	}
}

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"codex:a1", "codex:*", true}, {"codex", "codex:*", false}, {"a", "?", true}, {"ab", "?", false},
		{"x:y:z", "*:z", true}, {"", "*", true}, {"abc", "a*c", true}, {"abd", "a*c", false},
	} {
		if got := MatchPattern(c.s, c.p); got != c.want {
			t.Errorf("MatchPattern(%q, %q) = %v", c.s, c.p, got)
		}
	}
}

// The ed25519 signer's signatures are crypto/ed25519's, byte for byte.
func TestEd25519SignerMatchesStdlib(t *testing.T) {
	for i := 0; i < 200; i++ {
		_, priv, _ := ed25519.GenerateKey(rand.Reader)
		msg := make([]byte, i*7)
		rand.Read(msg)
		s, err := NewEd25519Signer(priv)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := s.Sign(nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		if want := ed25519.Sign(priv, msg); string(sig.Blob) != string(want) {
			t.Fatalf("key %d: signature differs from crypto/ed25519", i)
		}
		if err := s.PublicKey().Verify(msg, sig); err != nil {
			t.Fatal(err)
		}
	}
}
