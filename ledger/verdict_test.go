package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-rally/git-rally/facts"
	"golang.org/x/crypto/ssh"
)

// writeKey writes a throw-away ed25519 private key file and returns its
// path and its authorized-keys line.
func writeKey(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, _ := ssh.NewPublicKey(pub)
	return p, string(ssh.MarshalAuthorizedKey(sp))
}

func (c *clone) verifier(t *testing.T) *Verifier {
	t.Helper()
	v, err := c.ledger(t).Verifier()
	if err != nil || v == nil {
		t.Fatalf("%s: verifier %v, %v", c.name, v, err)
	}
	return v
}

// Each commit's signature is checked once: a second reader, and a reader
// after one more append, check only what is new; a merge keeps the
// verdicts of the facts it carries.
func TestVerdictsIncremental(t *testing.T) {
	now := t0
	_, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	dir := t.TempDir()
	keyA, pubA := writeKey(t, dir, "a")
	keyB, pubB := writeKey(t, dir, "b")
	allowed := filepath.Join(dir, "allowed")
	os.WriteFile(allowed, []byte("t:c0 "+pubA+"t:c1 "+pubB), 0o666)
	for c, key := range map[*clone]string{a: keyA, b: keyB} {
		git(t, c.dir, "config", "rally.sign", "true")
		git(t, c.dir, "config", "user.signingKey", key)
		git(t, c.dir, "config", "gpg.ssh.allowedSignersFile", allowed)
	}
	var fs []*facts.Fact
	for _, s := range []string{"one", "two", "three"} {
		fs = append(fs, a.note(t, s))
	}
	n := sigChecks
	v := a.verifier(t)
	if got := sigChecks - n; got != 3 {
		t.Fatalf("first read checked %d signatures, want 3", got)
	}
	for _, f := range fs {
		if got := v.Verdict(f.ID, f.Tool); got != Verified {
			t.Fatalf("%s: %s", f.Subject, got)
		}
	}
	n = sigChecks
	a.verifier(t)
	if got := sigChecks - n; got != 0 {
		t.Fatalf("a second read checked %d signatures, want 0", got)
	}
	fs = append(fs, a.note(t, "four"))
	n = sigChecks
	a.verifier(t)
	if got := sigChecks - n; got != 1 {
		t.Fatalf("a read after one append checked %d signatures, want 1", got)
	}
	a.sync(t, true)
	fb := b.note(t, "b apart")
	b.sync(t, true) // a merge commit signed by b
	n = sigChecks
	v = b.verifier(t)
	if got := sigChecks - n; got != 6 {
		t.Fatalf("b checked %d signatures, want 6 (4 of a, 1 of b, the merge)", got)
	}
	for _, f := range append(fs, fb) {
		if got := v.Verdict(f.ID, f.Tool); got != Verified {
			t.Errorf("after the merge %s is %s", f.Subject, got)
		}
	}
	// A key listed for another tool: bad, whoever merged it.
	if got := v.Verdict(fs[0].ID, "t:c1"); got != BadSig {
		t.Errorf("a's fact as b's tool: %s, want bad", got)
	}
	if c := v.Counts(append(fs, fb)); c[Verified] != 5 {
		t.Errorf("counts %v", c)
	}
	n = sigChecks
	b.verifier(t)
	if got := sigChecks - n; got != 0 {
		t.Fatalf("b's second read checked %d signatures, want 0", got)
	}
	// A truncated record is not trusted: everything is checked again.
	sigs := filepath.Join(b.common(), "rally", "verdicts", "sigs")
	data, err := os.ReadFile(sigs)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(sigs, data[:len(data)/2], 0o666)
	n = sigChecks
	v = b.verifier(t)
	if got := sigChecks - n; got != 6 {
		t.Fatalf("after truncation b checked %d signatures, want 6", got)
	}
	if c := v.Counts(append(fs, fb)); c[Verified] != 5 {
		t.Errorf("counts after truncation %v", c)
	}
}

// A first verification of a long ledger goes through the git command line
// (rev-list, cat-file --batch, diff-tree --stdin) and gives the verdicts
// the in-process walk gives.
func TestVerdictsBigWalk(t *testing.T) {
	bigWalkVerdicts(t)
}

// ... walkChunk commits at a time (a first verification of a million
// commits held every one): the same records, byte for byte, and no more
// than a chunk of commits held at once.
func TestVerdictsBigWalkChunked(t *testing.T) {
	defer func(n int) { walkChunk = n }(walkChunk)
	walkChunk, walkHeld = 16, 0
	b := bigWalkVerdicts(t)
	if walkHeld > 16 {
		t.Errorf("held %d commits at once, want at most a chunk (16)", walkHeld)
	}
	vdir := filepath.Join(b.common(), "rally", "verdicts")
	chunked, err := os.ReadFile(filepath.Join(vdir, "sigs"))
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(vdir)
	walkChunk, walkHeld = 1<<16, 0
	b.verifier(t)
	whole, _ := os.ReadFile(filepath.Join(vdir, "sigs"))
	if string(chunked) != string(whole) {
		t.Errorf("records differ by chunks:\n%s\n---\n%s", chunked, whole)
	}
	if walkHeld < bigWalk+8 {
		t.Errorf("unchunked, held %d commits at once, want every one", walkHeld)
	}
}

func bigWalkVerdicts(t *testing.T) *clone {
	now := t0
	_, cs := network(t, 2, &now)
	a, b := cs[0], cs[1]
	dir := t.TempDir()
	keyA, pubA := writeKey(t, dir, "a")
	keyB, pubB := writeKey(t, dir, "b")
	allowed := filepath.Join(dir, "allowed")
	os.WriteFile(allowed, []byte("t:c0 "+pubA+"t:c1 "+pubB), 0o666)
	for c, key := range map[*clone]string{a: keyA, b: keyB} {
		git(t, c.dir, "config", "rally.sign", "true")
		git(t, c.dir, "config", "user.signingKey", key)
		git(t, c.dir, "config", "gpg.ssh.allowedSignersFile", allowed)
	}
	var fs []*facts.Fact
	for i := 0; i < bigWalk+6; i++ {
		fs = append(fs, a.note(t, fmt.Sprintf("a %d", i)))
	}
	a.sync(t, true)
	fs = append(fs, b.note(t, "b signed"))
	git(t, b.dir, "config", "rally.sign", "false")
	unsigned := b.note(t, "b unsigned")
	git(t, b.dir, "config", "rally.sign", "true")
	b.sync(t, false) // a merge signed by b
	n := sigChecks
	v := b.verifier(t)
	if got, want := sigChecks-n, len(fs)+2; got != want {
		t.Fatalf("checked %d signatures, want %d (each commit once)", got, want)
	}
	for _, f := range fs {
		if got := v.Verdict(f.ID, f.Tool); got != Verified {
			t.Errorf("%s: %s", f.Subject, got)
		}
	}
	if got := v.Verdict(unsigned.ID, unsigned.Tool); got != Unsigned {
		t.Errorf("unsigned note: %s", got)
	}
	return b
}
