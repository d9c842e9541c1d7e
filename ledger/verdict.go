package ledger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Verdicts on facts (SPEC §17): whether the commit that introduced a fact
// was signed by a key the allowed-signers file lists for the fact's tool.
const (
	Verified = "verified"
	Unsigned = "unsigned"
	BadSig   = "bad"
)

// sigRecord is what one commit that introduced a fact says about it: no
// signature ('u'), a signature that does not verify ('x'), or a good
// signature by keys[key] at the commit's time ('g'). Which key may sign
// for whom is decided when a verdict is asked for, so a changed
// allowed-signers file (a rotation) needs no new walk.
type sigRecord struct {
	state byte
	key   int
	at    int64
}

// verdictCache is the machine-local record of every commit's signature
// check, under <common>/rally/verdicts/: "head" (every ancestor of that
// commit is recorded, and the length "sigs" had then) and "sigs" (keys and
// per-fact records, append-only). Each commit's signature is checked
// once; a verdict is a lookup. A "sigs" shorter than head says (truncated,
// damaged) is not trusted: everything is checked again.
type verdictCache struct {
	dir     string
	head    string
	sigsLen int64
	keys    []refs.PublicKey
	keyIdx  map[string]int
	recs    map[string][]sigRecord
}

func newVerdictCache(commonDir string) *verdictCache {
	vc := &verdictCache{dir: filepath.Join(commonDir, "rally", "verdicts")}
	vc.reset()
	return vc
}

func (vc *verdictCache) reset() {
	vc.head, vc.sigsLen, vc.keys, vc.keyIdx, vc.recs = "", 0, nil, map[string]int{}, map[string][]sigRecord{}
}

// load reads the cache files; damaged lines are skipped.
func (vc *verdictCache) load() {
	vc.reset()
	b, err := os.ReadFile(filepath.Join(vc.dir, "head"))
	if err != nil {
		return
	}
	var head string
	var sigsLen int64
	if n, _ := fmt.Sscanf(string(b), "%s %d", &head, &sigsLen); n != 2 {
		return
	}
	data, err := os.ReadFile(filepath.Join(vc.dir, "sigs"))
	if err != nil || int64(len(data)) < sigsLen {
		return
	}
	data = data[:sigsLen] // what a writer that died before head moved appended is checked again
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := string(data[:i])
		data = data[i+1:]
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "k":
			pub, err := refs.SSH.ParseKey([]byte(strings.Join(f[2:], " ")))
			if n, _ := strconv.Atoi(f[1]); err == nil && n == len(vc.keys) {
				vc.keyIdx[string(pub.Marshal())] = n
				vc.keys = append(vc.keys, pub)
			}
		case len(f) == 3 && f[0] == "f" && (f[2] == "u" || f[2] == "x"):
			vc.recs[f[1]] = append(vc.recs[f[1]], sigRecord{state: f[2][0]})
		case len(f) == 5 && f[0] == "f" && f[2] == "g":
			k, err1 := strconv.Atoi(f[3])
			at, err2 := strconv.ParseInt(f[4], 10, 64)
			if err1 == nil && err2 == nil && k >= 0 && k < len(vc.keys) {
				vc.recs[f[1]] = append(vc.recs[f[1]], sigRecord{state: 'g', key: k, at: at})
			}
		}
	}
	vc.head, vc.sigsLen = head, sigsLen
}

// bigWalk is the number of new commits from which they are listed, read
// and diffed through the git command line (rev-list, cat-file --batch,
// diff-tree --stdin) instead of object by object in-process: a first
// verification of a ledger of thousands of commits.
const bigWalk = 64

// updateVerdicts records every commit reachable from head that is not
// recorded. The caller holds the verdicts lock and has just loaded vc.
func (l *Ledger) updateVerdicts(vc *verdictCache, head refs.Hash) error {
	scs, hashes, err := l.linearChain(vc, head)
	if err != nil {
		return err
	}
	var added map[refs.Hash][]string
	if scs == nil {
		// Not a short chain on top of the recorded head: a merge, a
		// rewritten ledger, a first verification.
		var not []refs.Hash
		if h, err := refs.ParseHash(vc.head); err == nil {
			not = append(not, h)
		}
		hashes, err = l.Store.RevList(head, not...)
		if err != nil && len(not) > 0 {
			vc.reset() // the recorded head is gone: record from scratch
			hashes, err = l.Store.RevList(head)
		}
		if err != nil {
			return fmt.Errorf("listing ledger commits: %w", err)
		}
		if scs, err = l.Store.ReadSignedCommits(hashes); err != nil {
			return fmt.Errorf("reading ledger commits: %w", err)
		}
		if len(hashes) >= bigWalk {
			if added, err = l.Store.AddedFiles(hashes); err != nil {
				return fmt.Errorf("diffing ledger commits: %w", err)
			}
		}
	}
	trees := make(map[refs.Hash]refs.Hash, len(hashes))
	var sigs bytes.Buffer
	for i, sc := range scs {
		h := hashes[i]
		trees[h] = sc.Tree
		var ids []string
		if added != nil {
			for _, p := range added[h] {
				if isFactPath(p) {
					ids = append(ids, strings.TrimSuffix(p[strings.LastIndexByte(p, '/')+1:], ".json"))
				}
			}
		} else {
			var parents []refs.Hash
			for _, p := range sc.Parents {
				t, ok := trees[p]
				if !ok {
					pc, err := l.Store.ReadCommit(p)
					if err != nil {
						return fmt.Errorf("checking signatures: %w", err)
					}
					t = pc.Tree
				}
				parents = append(parents, t)
			}
			if err := l.introduced("", sc.Tree, parents, &ids); err != nil {
				return fmt.Errorf("checking signatures: %w", err)
			}
		}
		rec, key := checkSignature(sc)
		if rec.state == 'g' {
			k := string(key.Marshal())
			n, ok := vc.keyIdx[k]
			if !ok {
				n = len(vc.keys)
				vc.keyIdx[k], vc.keys = n, append(vc.keys, key)
				fmt.Fprintf(&sigs, "k %d %s", n, refs.SSH.KeyLine(key))
			}
			rec.key = n
		}
		for _, id := range ids {
			vc.recs[id] = append(vc.recs[id], rec)
			if rec.state == 'g' {
				fmt.Fprintf(&sigs, "f %s g %d %d\n", id, rec.key, rec.at)
			} else {
				fmt.Fprintf(&sigs, "f %s %c\n", id, rec.state)
			}
		}
	}
	if err := os.MkdirAll(vc.dir, 0o777); err != nil {
		return err
	}
	sl, err := appendFile(filepath.Join(vc.dir, "sigs"), vc.sigsLen, sigs.Bytes())
	if err != nil {
		return err
	}
	tmp := filepath.Join(vc.dir, "head.tmp")
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%s %d\n", head, sl)), 0o666); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(vc.dir, "head")); err != nil {
		return err
	}
	vc.head, vc.sigsLen = head.String(), sl
	return nil
}

// appendFile writes b at offset at of the file (dropping whatever an
// interrupted writer left beyond it) and returns the new length.
func appendFile(path string, at int64, b []byte) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return 0, err
	}
	err = f.Truncate(at)
	if err == nil {
		_, err = f.WriteAt(b, at)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return at + int64(len(b)), err
}

// linearChain returns, parents first, the commits from the recorded head
// to head when they are a first-parent chain of at most bigWalk commits
// (appends on top of what is recorded), and nil otherwise.
func (l *Ledger) linearChain(vc *verdictCache, head refs.Hash) ([]refs.SignedCommit, []refs.Hash, error) {
	if vc.head == "" {
		return nil, nil, nil
	}
	var scs []refs.SignedCommit
	var hs []refs.Hash
	for c, i := head, 0; i < bigWalk && !c.IsZero(); i++ {
		if c.String() == vc.head {
			for a, b := 0, len(scs)-1; a < b; a, b = a+1, b-1 {
				scs[a], scs[b] = scs[b], scs[a]
				hs[a], hs[b] = hs[b], hs[a]
			}
			return scs, hs, nil
		}
		sc, err := l.Store.ReadSignedCommit(c)
		if err != nil {
			return nil, nil, fmt.Errorf("checking signatures: %w", err)
		}
		if len(sc.Parents) != 1 {
			return nil, nil, nil
		}
		scs, hs = append(scs, sc), append(hs, c)
		c = sc.Parents[0]
	}
	return nil, nil, nil
}

// introduced lists the fact ids under tree t that none of the parent
// trees holds at the same path with the same content: what this commit
// brought in itself. A merge's union carries facts from its parents, so
// it introduces none of them; it descends only where t differs from every
// parent.
func (l *Ledger) introduced(prefix string, t refs.Hash, parents []refs.Hash, out *[]string) error {
	es, err := l.readTree(t)
	if err != nil {
		return err
	}
	pms := make([]map[string]refs.Entry, 0, len(parents))
	for _, p := range parents {
		if p.IsZero() {
			continue
		}
		pes, err := l.readTree(p)
		if err != nil {
			return err
		}
		m := make(map[string]refs.Entry, len(pes))
		for _, e := range pes {
			m[e.Name] = e
		}
		pms = append(pms, m)
	}
	for _, e := range es {
		p := joinPath(prefix, e.Name)
		carried := false
		var sub []refs.Hash
		for _, m := range pms {
			pe, ok := m[e.Name]
			if !ok {
				continue
			}
			if pe.Hash == e.Hash && pe.Dir == e.Dir {
				carried = true
				break
			}
			if pe.Dir && e.Dir {
				sub = append(sub, pe.Hash)
			}
		}
		switch {
		case carried:
		case e.Dir:
			if err := l.introduced(p, e.Hash, sub, out); err != nil {
				return err
			}
		case isFactPath(p):
			*out = append(*out, strings.TrimSuffix(e.Name, ".json"))
		}
	}
	return nil
}

// checkSignature checks a commit's signature on its own: good, bad or
// none, and the key. A signature rally cannot read (a GPG one) is bad.
func checkSignature(sc refs.SignedCommit) (sigRecord, refs.PublicKey) {
	sigChecks++
	if sc.Signature == "" {
		return sigRecord{state: 'u'}, nil
	}
	key, ok := refs.SSH.Check([]byte(sc.Signature), sc.Payload)
	if !ok {
		return sigRecord{state: 'x'}, nil
	}
	return sigRecord{state: 'g', at: sc.When.Unix()}, key
}

// sigChecks counts commits whose signature was checked (for tests: each
// commit once).
var sigChecks int

// Verifier gives the verdict of any fact at the ledger's head.
type Verifier struct {
	vc      *verdictCache
	allowed refs.AllowedSigners // nil: no allowed-signers file
}

// Verifier brings the signature records up to the current head and reads
// the allowed-signers file. It returns nil, nil when verification is not
// configured (Signing.Verifying).
func (l *Ledger) Verifier() (*Verifier, error) {
	if !l.Signing.Verifying() {
		return nil, nil
	}
	if refs.SSH == nil {
		return nil, refs.ErrNoSSH
	}
	head, err := l.Head()
	if err != nil {
		return nil, err
	}
	if l.verifier != nil && l.verifier.vc.head == hashString(head) {
		return l.verifier, nil
	}
	vc := newVerdictCache(l.Store.CommonDir)
	vc.load()
	if head.IsZero() {
		vc.head = ""
	} else if vc.head != head.String() {
		q, err := refs.QueueLock(l.Store.CommonDir, "verdicts")
		if err != nil {
			return nil, err
		}
		vc.load()
		if vc.head != head.String() {
			err = l.updateVerdicts(vc, head)
		}
		refs.UnlockQueue(q)
		if err != nil {
			// A commit that cannot be read (a shallow or damaged
			// ledger): what was not checked is not verified.
			l.warn("signatures not checked: %v", err)
		}
	}
	v := &Verifier{vc: vc}
	if p := l.Signing.AllowedSigners; p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			l.warn("allowed signers: %v (no signature can be verified)", err)
		}
		var errs []error
		v.allowed, errs = refs.SSH.ParseAllowedSigners(data)
		for _, e := range errs {
			l.warn("%s: %v", p, e)
		}
	}
	l.verifier = v
	return v, nil
}

// Verdict is the verdict of the fact id authored by tool: verified when a
// commit that introduced it is signed by a key the allowed-signers file
// lists for tool (for rally's own facts, such as reaped claims, for
// anyone); else unsigned when one of those commits is unsigned (a genuine
// fact from before signing stays unsigned when a forger copies it into a
// commit of their own); else bad. A fact with no record (its commit could
// not be read) is unsigned.
func (v *Verifier) Verdict(id, tool string) string {
	best := ""
	recs := v.vc.recs[id]
	if len(recs) == 0 {
		return Unsigned
	}
	for _, r := range recs {
		switch r.state {
		case 'u':
			if best == "" || best == BadSig {
				best = Unsigned
			}
		case 'x':
			if best == "" {
				best = BadSig
			}
		case 'g':
			key, at := v.vc.keys[r.key], time.Unix(r.at, 0)
			ok := false
			switch {
			case v.allowed == nil:
			case tool == facts.SystemTool:
				ok = v.allowed.Lists(key, "git", at)
			default:
				ok = v.allowed.Allows(tool, key, "git", at)
			}
			if ok {
				return Verified
			}
			if best == "" {
				best = BadSig
			}
		}
	}
	return best
}

// Counts counts the verdicts of fs.
func (v *Verifier) Counts(fs []*facts.Fact) map[string]int {
	out := map[string]int{Verified: 0, Unsigned: 0, BadSig: 0}
	for _, f := range fs {
		out[v.Verdict(f.ID, f.Tool)]++
	}
	return out
}
