package ledger

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Two writers at the same commit write the same checkpoint bytes: a
// projection built at once, one built fact by fact, and one saved to the
// cache (claims file, handoffs file) and loaded again encode alike.
func TestCheckpointStateDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	tools := []string{"a", "b", "c"}
	scopes := []string{"file:x", "file:y", "dir:d", "file:d/e", "port:80"}
	for trial := 0; trial < 100; trial++ {
		var all []*facts.Fact
		for i := 1; i <= 60; i++ {
			tool := tools[rng.Intn(len(tools))]
			var f facts.Fact
			switch rng.Intn(8) {
			case 0, 1, 2:
				f = facts.Fact{Kind: facts.KindClaim, Tool: tool, Scopes: []string{scopes[rng.Intn(len(scopes))]}, LeaseS: 1800}
			case 3:
				f = facts.Fact{Kind: facts.KindRelease, Tool: tool, Ref: pick(rng, all, facts.KindClaim)}
			case 4:
				f = facts.Fact{Kind: facts.KindHandoff, Tool: tool, Target: tools[rng.Intn(len(tools))], Subject: "h"}
			case 5:
				f = facts.Fact{Kind: facts.KindReceipt, Tool: tool, Ref: pick(rng, all, facts.KindHandoff)}
			case 6:
				if ref := pick(rng, all, ""); ref != "" {
					f = facts.Fact{Kind: facts.KindRetract, Tool: authorOf(all, ref), Ref: ref}
				} else {
					f = facts.Fact{Kind: facts.KindNote, Tool: tool}
				}
			default:
				f = facts.Fact{Kind: facts.KindRisk, Tool: tool, Subject: "r"}
			}
			all = append(all, mk(int64(i), i*[]int{10, 3000}[trial%2], f))
		}
		// Shuffled: Build sorts.
		shuffled := append([]*facts.Fact(nil), all...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		built := facts.Build(shuffled)
		inc := facts.NewState()
		for i := 0; i < len(all); {
			n := min(len(all)-i, 1+rng.Intn(4))
			cp := inc.Clone()
			if err := cp.Apply(append([]*facts.Fact(nil), all[i:i+n]...)); err != nil {
				cp = facts.Build(append([]*facts.Fact(nil), all[:i+n]...))
			}
			inc = cp
			i += n
		}
		for _, s := range []*facts.State{built, inc} {
			s.Head, s.Tree = "h", "t"
		}
		want := encodeCkptState(built)
		if got := encodeCkptState(inc); !bytes.Equal(got, want) {
			t.Fatalf("trial %d: incremental and built projections encode differently", trial)
		}
		// Through the cache: claims and handoffs in files of their own.
		c := newCache(t.TempDir())
		saved := built.Clone()
		saved.Head, saved.Tree = "h", "t"
		c.save(saved, nil, true)
		loaded := c.load()
		if loaded == nil {
			t.Fatalf("trial %d: the cache did not load", trial)
		}
		if got := encodeCkptState(loaded); !bytes.Equal(got, want) {
			t.Fatalf("trial %d: the projection loaded from the cache encodes differently", trial)
		}
		st, ok := decodeCkptState(want)
		if !ok || !bytes.Equal(encodeCkptState(st), want) {
			t.Fatalf("trial %d: decode and encode again: %v", trial, ok)
		}
	}
}

// ckptRoom is a clone with a room in its ledger and a signing key, and a
// second key nobody trusts.
type ckptRoom struct {
	c            *clone
	now          *time.Time
	key, pub     string // trusted
	other, opub  string // not trusted
	allowed      string
	checkpointed refs.Hash
}

func newCkptRoom(t *testing.T) *ckptRoom {
	t.Helper()
	now := t0
	_, cs := network(t, 1, &now)
	r := &ckptRoom{c: cs[0], now: &now}
	dir := t.TempDir()
	r.key, r.pub = writeKey(t, dir, "lead")
	r.other, r.opub = writeKey(t, dir, "mallory")
	r.allowed = filepath.Join(dir, "allowed")
	os.WriteFile(r.allowed, []byte("lead@example.com "+r.pub+"mallory@example.com "+r.opub), 0o666)
	c := r.c
	for i := 0; i < 40; i++ {
		now = now.Add(time.Minute)
		switch i % 5 {
		case 0:
			c.claim(t, "t:a", "file:src/"+string(rune('a'+i%26))+".go")
		case 1:
			l := c.ledger(t)
			if _, err := l.Append(facts.Simple(&facts.Fact{Kind: facts.KindHandoff, Tool: "t:a", Target: "t:b", Subject: "review"})); err != nil {
				t.Fatal(err)
			}
		default:
			c.note(t, "n")
		}
	}
	git(t, c.dir, "config", "user.signingKey", r.key)
	res, err := c.ledger(t).WriteCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	r.checkpointed = res.Ledger
	// Facts after the checkpoint: a release, a claim, notes.
	for i := 0; i < 5; i++ {
		now = now.Add(time.Minute)
		c.note(t, "after")
	}
	c.claim(t, "t:b", "file:src/late.go")
	return r
}

// cold reads the projection with no cache, as a new process does.
func (r *ckptRoom) cold(t *testing.T) (*facts.State, bool) {
	t.Helper()
	os.RemoveAll(filepath.Join(r.c.common(), "rally", "cache"))
	n := CheckpointSeeds
	l := r.c.ledger(t)
	st, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	return st, CheckpointSeeds > n
}

func (r *ckptRoom) trust(t *testing.T, signer string) {
	t.Helper()
	git(t, r.c.dir, "config", "gpg.ssh.allowedSignersFile", r.allowed)
	git(t, r.c.dir, "config", "--replace-all", "rally.checkpointSigner", signer)
}

// full is the projection computed from every fact.
func (r *ckptRoom) full(t *testing.T) []byte {
	t.Helper()
	os.RemoveAll(filepath.Join(r.c.common(), "rally", "cache"))
	st, err := r.c.ledger(t).readMirror()
	if err != nil {
		t.Fatal(err)
	}
	return encodeCkptState(st)
}

func TestCheckpointSeedsColdRead(t *testing.T) {
	r := newCkptRoom(t)
	want := r.full(t)
	// No configuration: computed, as before.
	if _, seeded := r.cold(t); seeded {
		t.Fatal("seeded from a checkpoint with no rally.checkpointSigner")
	}
	for _, signer := range []string{"lead@example.com", strings.TrimSpace(r.pub)} {
		r.trust(t, signer)
		st, seeded := r.cold(t)
		if !seeded {
			t.Fatalf("trusting %.20s: not seeded", signer)
		}
		if got := encodeCkptState(st); !bytes.Equal(got, want) {
			t.Fatalf("trusting %.20s: the seeded projection differs from the computed one", signer)
		}
		if _, err := os.Stat(filepath.Join(r.c.common(), "rally", "cache", "state.bin")); err == nil {
			t.Fatal("a seeded read saved state.bin")
		}
	}
	if ps := checkpointProblems(t, r.c); len(ps) != 0 {
		t.Errorf("doctor on a true checkpoint: %v", ps)
	}
	// At the head: compared with the projection computed there.
	cur := mustHead(t, r.c)
	git(t, r.c.dir, "update-ref", LedgerRef, r.checkpointed.String())
	if ps := checkpointProblems(t, r.c); len(ps) != 0 {
		t.Errorf("doctor on a true checkpoint of the head: %v", ps)
	}
	git(t, r.c.dir, "update-ref", LedgerRef, cur.String())
	// A fetched checkpoint (refs/rally-remotes/*/checkpoints/*) counts.
	ref := CheckpointRefPrefix + strings.TrimPrefix(mustRef(t, r.c), CheckpointRefPrefix)
	h, _ := r.c.ledger(t).Store.ReadRef(ref)
	git(t, r.c.dir, "update-ref", "-d", ref)
	git(t, r.c.dir, "update-ref", TrackingPrefix+"origin/checkpoints/x", h.String())
	if st, seeded := r.cold(t); !seeded || !bytes.Equal(encodeCkptState(st), want) {
		t.Fatalf("a fetched checkpoint: seeded %v", seeded)
	}
	// What reads the mirror computes: log, show, appends.
	os.RemoveAll(filepath.Join(r.c.common(), "rally", "cache"))
	l := r.c.ledger(t)
	n := CheckpointSeeds
	if _, err := l.Tail(3, nil); err != nil {
		t.Fatal(err)
	}
	if CheckpointSeeds != n {
		t.Fatal("a tail read from a checkpoint")
	}
	if _, err := os.Stat(filepath.Join(r.c.common(), "rally", "cache", "state.bin")); err != nil {
		t.Fatal("the tail did not save the cache")
	}
}

func mustRef(t *testing.T, c *clone) string {
	t.Helper()
	for name := range c.ledger(t).Store.RefsMatching(CheckpointRefPrefix + "*") {
		return name
	}
	t.Fatal("no checkpoint ref")
	return ""
}

// A checkpoint that is not trusted changes nothing: signed by a key not
// named, unsigned, a trusted signature over other bytes, of a commit
// that is not an ancestor of the head, of other settings, of another
// format, with facts the reader would hold back.
func TestCheckpointUntrustedIgnored(t *testing.T) {
	r := newCkptRoom(t)
	want := r.full(t)
	l := r.c.ledger(t)
	ref := mustRef(t, r.c)
	good, _ := l.Store.ReadRef(ref)
	gsc, err := l.Store.ReadSignedCommit(good)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := parseCkptMessage(gsc.Message)
	if !ok {
		t.Fatalf("message %q", gsc.Message)
	}
	// A lie: the checkpointed projection with a claim less.
	st0, ok := l.ckptState(gsc.Tree)
	if !ok {
		t.Fatal("the checkpoint does not read")
	}
	lie := st0.Clone()
	all := lie.Claims.All()
	added := map[string]*facts.Fact{}
	for _, f := range all[1:] {
		added[f.ID] = f
	}
	lie.Claims = facts.ClaimSet{Added: added}
	liePayload := encodeCkptState(lie)
	lead := NewSigner(r.key, "")
	mallory := NewSigner(r.other, "")
	for _, s := range []refs.Signer{lead, mallory} {
		if err := s.Ready(); err != nil {
			t.Fatal(err)
		}
	}
	r.trust(t, "lead@example.com")
	write := func(payload []byte, msg string, s refs.Signer) refs.Hash {
		h, err := l.writeCkptCommit(payload, msg, s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// A commit of the same ledger not in its history.
	other, err := l.Store.WriteCommit(refs.Commit{Tree: mustTree(t, l, m.ledger), Message: "elsewhere\n", When: *r.now})
	if err != nil {
		t.Fatal(err)
	}
	notAncestor := m
	notAncestor.ledger = other
	stOther := st0.Clone()
	stOther.Head = other.String()
	wrongSettings := m
	wrongSettings.settings = "0000000000000000"
	wrongFormat := m
	wrongFormat.format = "1.0"
	future := m
	future.latest = r.now.Add(time.Hour).UnixNano()
	// The good signature over other bytes: the lie's tree under the
	// signed commit's header.
	transplanted := func() refs.Hash {
		lt := write(liePayload, m.String(), nil)
		lc, _ := l.Store.ReadCommit(lt)
		raw := strings.Replace(string(gsc.Payload), "tree "+gsc.Tree.String(), "tree "+lc.Tree.String(), 1)
		withSig := strings.Replace(raw, "\n\n", "\ngpgsig "+strings.ReplaceAll(strings.TrimSuffix(gsc.Signature, "\n"), "\n", "\n ")+"\n\n", 1)
		h, err := refs.GitInput(r.c.dir, nil, []byte(withSig), "hash-object", "-t", "commit", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		hh, _ := refs.ParseHash(h)
		return hh
	}
	cases := map[string]refs.Hash{
		"untrusted key":       write(liePayload, m.String(), mallory),
		"unsigned":            write(liePayload, m.String(), nil),
		"signature elsewhere": transplanted(),
		"not an ancestor":     write(encodeCkptState(stOther), notAncestor.String(), lead),
		"other settings":      write(liePayload, wrongSettings.String(), lead),
		"other format":        write(liePayload, wrongFormat.String(), lead),
		"held back":           write(liePayload, future.String(), lead),
	}
	for name, h := range cases {
		git(t, r.c.dir, "update-ref", ref, h.String())
		git(t, r.c.dir, "update-ref", TrackingPrefix+"origin/checkpoints/forged", h.String())
		st, seeded := r.cold(t)
		if seeded {
			t.Errorf("%s: seeded", name)
		}
		if got := encodeCkptState(st); !bytes.Equal(got, want) {
			t.Errorf("%s: the projection changed", name)
		}
	}
	// The trusted lie is believed: that is what trusting a signer means.
	git(t, r.c.dir, "update-ref", "-d", TrackingPrefix+"origin/checkpoints/forged")
	git(t, r.c.dir, "update-ref", ref, write(liePayload, m.String(), lead).String())
	if st, seeded := r.cold(t); !seeded || bytes.Equal(encodeCkptState(st), want) {
		t.Errorf("a lie of the trusted key: seeded %v, believed %v", seeded, !bytes.Equal(encodeCkptState(st), want))
	}
	// doctor names it: a read would believe it.
	if ps := checkpointProblems(t, r.c); len(ps) != 1 || ps[0].Path != ref {
		t.Errorf("doctor on a lying checkpoint: %v", ps)
	}
	cur := mustHead(t, r.c)
	git(t, r.c.dir, "update-ref", LedgerRef, m.ledger.String())
	if ps := checkpointProblems(t, r.c); len(ps) != 1 || ps[0].Path != ref {
		t.Errorf("doctor on a lying checkpoint of the head: %v", ps)
	}
	git(t, r.c.dir, "update-ref", LedgerRef, cur.String())
	// Under rally.requireSigned the view is computed.
	git(t, r.c.dir, "config", "rally.requireSigned", "true")
	if _, seeded := r.cold(t); seeded {
		t.Error("seeded under rally.requireSigned")
	}
}

func mustTree(t *testing.T, l *Ledger, c refs.Hash) refs.Hash {
	t.Helper()
	cm, err := l.Store.ReadCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	return cm.Tree
}

func checkpointProblems(t *testing.T, c *clone) []Problem {
	t.Helper()
	ps, err := c.ledger(t).Doctor(1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []Problem
	for _, p := range ps {
		if p.Code == "checkpoint" {
			out = append(out, p)
		}
	}
	return out
}

// A cache far behind the head (more new facts than a catch-up applies:
// a fresh clone's own empty ledger under a fetched one) is a rebuild:
// the checkpoint is used instead, and the cache left as it was.
func TestCheckpointSeedsFarBehind(t *testing.T) {
	r := newCkptRoom(t)
	r.trust(t, "lead@example.com")
	head := mustHead(t, r.c)
	// The cache ten appends before the checkpoint, the head three after.
	before := strings.TrimSpace(git(t, r.c.dir, "rev-parse", r.checkpointed.String()+"~10"))
	git(t, r.c.dir, "update-ref", LedgerRef, before)
	os.RemoveAll(filepath.Join(r.c.common(), "rally", "cache"))
	if _, err := r.c.ledger(t).readMirror(); err != nil {
		t.Fatal(err)
	}
	three := strings.TrimSpace(git(t, r.c.dir, "rev-parse", head.String()+"~3"))
	git(t, r.c.dir, "update-ref", LedgerRef, three)
	want := r.fullAt(t, three)
	defer func(n int) { bigCatchUp = n }(bigCatchUp)
	bigCatchUp = 5
	n := CheckpointSeeds
	st, err := r.c.ledger(t).Read()
	if err != nil {
		t.Fatal(err)
	}
	if CheckpointSeeds != n+1 || !bytes.Equal(encodeCkptState(st), want) {
		t.Fatalf("far behind: seeded %d, equal %v", CheckpointSeeds-n, bytes.Equal(encodeCkptState(st), want))
	}
	bigCatchUp = 100
	git(t, r.c.dir, "update-ref", LedgerRef, head.String())
	want = r.fullAt(t, head.String())
	if st, err := r.c.ledger(t).Read(); err != nil || CheckpointSeeds != n+1 || !bytes.Equal(encodeCkptState(st), want) {
		t.Fatalf("a catch-up of a few facts: seeded %d, %v", CheckpointSeeds-n, err)
	}
}

// fullAt is full at another head, the cache left as it was.
func (r *ckptRoom) fullAt(t *testing.T, head string) []byte {
	t.Helper()
	cache := filepath.Join(r.c.common(), "rally", "cache")
	keep := cache + ".keep"
	os.Rename(cache, keep)
	defer func() { os.RemoveAll(cache); os.Rename(keep, cache) }()
	cur := strings.TrimSpace(git(t, r.c.dir, "rev-parse", LedgerRef))
	git(t, r.c.dir, "update-ref", LedgerRef, head)
	defer git(t, r.c.dir, "update-ref", LedgerRef, cur)
	return r.full(t)
}

func mustHead(t *testing.T, c *clone) refs.Hash {
	t.Helper()
	h, err := c.ledger(t).Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// isAncestor walks the commits near the head in-process and asks git
// past them: both answer alike.
func TestCheckpointAncestry(t *testing.T) {
	r := newCkptRoom(t)
	l := r.c.ledger(t)
	head := mustHead(t, r.c)
	other, err := l.Store.WriteCommit(refs.Commit{Tree: mustTree(t, l, head), Message: "elsewhere\n", When: *r.now})
	if err != nil {
		t.Fatal(err)
	}
	defer func(n int) { ancestorWalk = n }(ancestorWalk)
	for _, walk := range []int{2, 1000} {
		ancestorWalk = walk
		if !l.isAncestor(r.checkpointed, head) || !l.isAncestor(head, head) {
			t.Errorf("walk %d: the checkpointed commit is not an ancestor", walk)
		}
		if l.isAncestor(other, head) || l.isAncestor(head, r.checkpointed) {
			t.Errorf("walk %d: a commit not in the history is an ancestor", walk)
		}
	}
}
