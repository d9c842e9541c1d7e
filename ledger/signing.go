package ledger

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// Signing is what the repository's git configuration says about signed
// facts (SPEC §17).
type Signing struct {
	// Sign: rally.sign. Every ledger commit is signed with user.signingKey.
	Sign bool
	// Require: rally.requireSigned. Projections ignore every fact that is
	// not verified, and this clone appends only facts that would be.
	Require bool
	// AllowedSigners: rally.allowedSigners, else gpg.ssh.allowedSignersFile.
	AllowedSigners string
}

// Verifying reports whether verdicts are computed: signing or an
// allowed-signers file is configured. Without either, no fact could be
// verified, and a ledger nobody signs is not walked for its signatures.
func (s Signing) Verifying() bool { return s.Sign || s.Require || s.AllowedSigners != "" }

// configureSigning reads the signing settings and gives the store its
// signer (the key itself is loaded at the first commit), and what git's
// core.fsync says to fsync: the configuration is read once.
func (l *Ledger) configureSigning(cfg *refs.Config) {
	l.Store.Fsync = refs.FsyncOf(cfg)
	l.Signing = Signing{
		Sign:           cfg.Bool("rally.sign"),
		Require:        cfg.Bool("rally.requireSigned"),
		AllowedSigners: cfg.Path("rally.allowedSigners"),
	}
	if l.Signing.AllowedSigners == "" {
		l.Signing.AllowedSigners = cfg.Path("gpg.ssh.allowedSignersFile")
	}
	l.signingKey = cfg.Get("user.signingKey")
	l.ckptSigners = cfg.GetAll("rally.checkpointSigner")
	l.autoCheckpoint = cfg.Bool("rally.checkpoint")
	if l.Signing.Sign {
		l.Store.Signer = NewSigner(cfg.Get("user.signingKey"), os.Getenv("SSH_AUTH_SOCK"))
	}
}

// NewSigner is refs.SSH's signer of key (user.signingKey); without
// package sshsig linked in, one that refuses to sign, so nothing is ever
// written unsigned by accident.
func NewSigner(key, agentSock string) refs.Signer {
	if refs.SSH == nil {
		return noSSH{}
	}
	return refs.SSH.NewSigner(key, agentSock)
}

// noSSH is the signer of a process without package sshsig.
type noSSH struct{}

func (noSSH) Ready() error                { return refs.ErrNoSSH }
func (noSSH) Sign([]byte) ([]byte, error) { return nil, refs.ErrNoSSH }

// checkCanWrite is the signing gate of every ledger commit: a key that
// cannot sign stops it before anything is written. With facts to append
// (appending), so does an unsigned clone where signatures are required;
// a merge adds no fact of this clone's and is not refused unsigned.
func (l *Ledger) checkCanWrite(appending bool) error {
	if l.Store.Signer != nil {
		return l.Store.Signer.Ready()
	}
	if l.Signing.Require && appending {
		return &facts.RefusedError{Msg: "rally.requireSigned is set and rally.sign is not: this clone appends only signed facts",
			Hint: "git config rally.sign true   # with user.signingKey set to your ssh key"}
	}
	return nil
}

// View is the projection commands act on: Read's, or under
// rally.requireSigned the projection of the facts that are verified.
// Unsigned and bad facts, whoever they name, stay in the log and in the
// totals (Ignored counts them) but never act: such a claim does not
// block, such a release closes nothing, such a receipt does not answer.
func (l *Ledger) View() (*facts.State, error) {
	st, err := l.Read()
	if err != nil {
		return nil, err
	}
	return l.view(st)
}

// view filters st for View; it is built from all facts (the mirror), once
// per head.
func (l *Ledger) view(st *facts.State) (*facts.State, error) {
	if !l.Signing.Require || st.Head == "" {
		return st, nil
	}
	if l.trusted != nil && l.trusted.Head == st.Head {
		return l.trusted, nil
	}
	v, err := l.Verifier()
	if err != nil {
		return nil, err
	}
	// facts.Build of the verified facts, streamed (Each): their
	// retractions first, as Build resolves them, then each verified fact
	// applied in (clock, id) order, a copy kept only where the projection
	// keeps it. Every fact was decoded and held (over 1 GB at a million
	// facts, for every command under requireSigned).
	nst := facts.NewState()
	type retraction struct{ id, ref, tool string }
	var rs []retraction
	if err := l.Each(facts.KindRetract, "", func(f *facts.Fact) error {
		if f.Ref != "" && v.Verdict(f.ID, f.Tool) == Verified {
			rs = append(rs, retraction{strings.Clone(f.ID), strings.Clone(f.Ref), strings.Clone(f.Tool)})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, r := range rs {
		if _, done := nst.Retraction[r.ref]; done {
			continue
		}
		// The target counts when it is verified and by the same tool.
		if t, err := l.Find(r.ref); err == nil && t.ID == r.ref && t.Tool == r.tool && v.Verdict(t.ID, t.Tool) == Verified {
			nst.Retraction[t.ID] = r.id
		}
	}
	total, kept := 0, 0
	err = l.Each("", "", func(f *facts.Fact) error {
		total++
		if total%viewSampleEvery == 0 && viewSample != nil {
			viewSample()
		}
		// Nothing unsigned acts, whoever it names: this clone never
		// appends unsigned under requireSigned, so an unsigned fact in
		// the caller's own name is a forgery like any other.
		if v.Verdict(f.ID, f.Tool) != Verified {
			return nil
		}
		g, err := parseOwned(f.Raw)
		if err != nil {
			return err
		}
		kept++
		nst.ApplyBuilt(g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	nst.Forget()
	nst.Head, nst.Tree, nst.MaxClock = st.Head, st.Tree, st.MaxClock
	nst.Facts, nst.Retracted, nst.ByKind, nst.Bad = st.Facts, st.Retracted, st.ByKind, st.Bad
	l.Ignored = total - kept
	l.trusted = nst
	return nst, nil
}

// viewSample, when set (tests), is called every viewSampleEvery facts
// view streams: what the projection holds meanwhile is measured there.
var (
	viewSample      func()
	viewSampleEvery = 256
)

// checkVerdicts is the gate on what this clone writes (SPEC §17): a fact
// whose verdict would be bad or ignored (the signing key is not listed
// for its tool in the allowed-signers file) is refused under
// rally.requireSigned, where no clone would act on it, and warned about
// otherwise. Unsigned writes are checkCanWrite's.
func (l *Ledger) checkVerdicts(fs []*facts.Fact, now time.Time) error {
	if !l.Signing.Sign || l.Store.Signer == nil || refs.SSH == nil {
		return nil
	}
	kh, ok := l.Store.Signer.(refs.KeyHolder)
	if !ok {
		return nil
	}
	key, err := kh.Public()
	if err != nil {
		return err
	}
	allowed := l.allowedSigners()
	var bad []string
	seen := map[string]bool{}
	for _, f := range fs {
		listed := false
		switch {
		case allowed == nil:
		case f.Tool == facts.SystemTool:
			listed = allowed.Lists(key, "git", now)
		default:
			listed = allowed.Allows(f.Tool, key, "git", now)
		}
		if !listed && !seen[f.Tool] {
			seen[f.Tool] = true
			bad = append(bad, f.Tool)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	where := "the allowed-signers file"
	if l.Signing.AllowedSigners == "" {
		where = "an allowed-signers file (none is configured)"
	} else {
		where += " " + l.Signing.AllowedSigners
	}
	msg := fmt.Sprintf("a fact as %s would not be verified: the signing key is not listed for it in %s", strings.Join(bad, ", "), where)
	if l.Signing.Require {
		return &facts.RefusedError{Msg: msg + "; rally.requireSigned is set, so no clone would act on it",
			Hint: "git rally whoami   # write as a tool your key is listed for, or list the key for " + bad[0] + " in the allowed-signers file",
			Code: "unverifiable-write"}
	}
	l.warn("%s; it is written and shown as bad", msg)
	return nil
}

// allowedSigners is the allowed-signers file, parsed once per process
// (the Verifier's when it was read).
func (l *Ledger) allowedSigners() refs.AllowedSigners {
	if l.verifier != nil {
		return l.verifier.allowed
	}
	if l.allowed != nil || l.Signing.AllowedSigners == "" {
		return l.allowed
	}
	data, err := os.ReadFile(l.Signing.AllowedSigners)
	if err != nil {
		return nil
	}
	l.allowed, _ = refs.SSH.ParseAllowedSigners(data)
	return l.allowed
}
