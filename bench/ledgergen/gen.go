// Package ledgergen builds realistic ledgers for benchmarks, in-process,
// through the real append path (ledger.Ledger.Append): a room of a dozen
// agents entering and leaving, claiming and releasing files, writing notes
// and decisions, handing work to each other and answering with receipts
// and resolves, with fact times spread over hours and days.
//
// Several facts go into one commit (at most MaxBatch) so that 100k facts
// build in seconds rather than minutes; each fact keeps its own time and
// the commit takes the time of its last fact. The generator is
// deterministic for a given seed and end time.
package ledgergen

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// Options shape a generated ledger.
type Options struct {
	Facts    int           // facts to append
	Seed     int64         // random seed
	End      time.Time     // time of the last fact (default: now)
	MeanGap  time.Duration // mean time between facts (default 30s: 120 facts an hour)
	MaxBatch int           // most facts in one commit (default 100, at most 200)
	// Tidy makes a room whose projection stays the same size however long
	// it runs: every handoff is resolved and no agent starts a new
	// session, so the peer list does not grow with history.
	Tidy bool
	// AutoPack packs loose objects whenever they pass
	// refs.PackLooseObjects, as rally's appends do in the background, so
	// the repository looks like one rally has been appending to.
	AutoPack bool
	// Progress, when set, is called after every commit.
	Progress func(done int)
}

// Stats describe what was built.
type Stats struct {
	Facts, Commits   int
	MaxBatch         int
	Start, End       time.Time
	ByKind           map[string]int
	Peers            int // owners (tool@session) in the room's peer list
	OpenClaims       int // open claims at the end
	OpenHandoffs     int // unresolved handoffs at the end
	AgentsTools      int
	ElapsedAppending time.Duration
}

func (s Stats) String() string {
	kinds := make([]string, 0, len(s.ByKind))
	for k := range s.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var kb strings.Builder
	for i, k := range kinds {
		if i > 0 {
			kb.WriteString(" ")
		}
		fmt.Fprintf(&kb, "%s=%d", k, s.ByKind[k])
	}
	return fmt.Sprintf("%d facts in %d commits (≤%d facts per commit) from %s to %s (%s), %d tools, %d peers listed; "+
		"at the end %d open claims, %d unresolved handoffs; kinds: %s; appended in %s",
		s.Facts, s.Commits, s.MaxBatch, s.Start.Format(time.RFC3339), s.End.Format(time.RFC3339),
		s.End.Sub(s.Start).Round(time.Minute), s.AgentsTools, s.Peers, s.OpenClaims, s.OpenHandoffs, kb.String(),
		s.ElapsedAppending.Round(time.Millisecond))
}

// Build appends o.Facts facts to the ledger. It replaces l.Now for the
// duration with a clock that reads the time of each commit's last fact.
func Build(l *ledger.Ledger, o Options) (Stats, error) {
	if o.End.IsZero() {
		o.End = time.Now()
	}
	o.End = o.End.UTC().Truncate(time.Millisecond)
	if o.MeanGap <= 0 {
		o.MeanGap = 30 * time.Second
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 100
	}
	if o.MaxBatch > 200 {
		o.MaxBatch = 200
	}
	rng := rand.New(rand.NewSource(o.Seed))
	times := planTimes(rng, o)
	sim := newSim(rng)
	sim.tidy = o.Tidy
	stats := Stats{ByKind: map[string]int{}, AgentsTools: len(sim.agents)}
	if len(times) > 0 {
		stats.Start, stats.End = times[0], times[len(times)-1]
	}
	saved := l.Now
	defer func() { l.Now = saved }()
	begin := time.Now()
	for i := 0; i < len(times); {
		n := batchSize(rng, o.MaxBatch)
		if i+n > len(times) {
			n = len(times) - i
		}
		bt := times[i : i+n]
		commitTime := bt[n-1]
		l.Now = func() time.Time { return commitTime }
		var planned []string
		fs, err := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
			out := sim.batch(st.MaxClock, bt)
			planned = planned[:0]
			for _, f := range out {
				planned = append(planned, f.ID)
			}
			return out, nil
		})
		if err != nil {
			return stats, fmt.Errorf("appending commit %d: %w", stats.Commits+1, err)
		}
		for j, f := range fs {
			if f.ID != planned[j] {
				return stats, fmt.Errorf("fact %d of commit %d: id %s, planned %s", j, stats.Commits+1, f.ID, planned[j])
			}
			stats.ByKind[f.Kind]++
		}
		stats.Facts += len(fs)
		stats.Commits++
		if len(fs) > stats.MaxBatch {
			stats.MaxBatch = len(fs)
		}
		i += n
		if o.AutoPack && l.Store.LooseEstimate() >= refs.PackLooseObjects {
			if err := l.Store.Pack(); err != nil {
				return stats, err
			}
		}
		if o.Progress != nil {
			o.Progress(stats.Facts)
		}
	}
	stats.ElapsedAppending = time.Since(begin)
	if o.AutoPack && l.Store.LooseEstimate() > 0 {
		// End as a settled repository: the background pack has run.
		if err := l.Store.Pack(); err != nil {
			return stats, err
		}
	}
	st, err := l.Read()
	if err != nil {
		return stats, err
	}
	stats.Peers, stats.OpenClaims, stats.OpenHandoffs = len(st.Peers), st.Claims.Len(), len(st.Handoffs())
	return stats, nil
}

// planTimes spreads the facts: exponential gaps around MeanGap, with now
// and then a quiet stretch of one to eight hours (nights, meetings), ending
// at End.
func planTimes(rng *rand.Rand, o Options) []time.Time {
	gaps := make([]time.Duration, o.Facts)
	var total time.Duration
	for i := range gaps {
		g := time.Duration(rng.ExpFloat64() * float64(o.MeanGap))
		if rng.Float64() < 0.002 {
			g += time.Hour + time.Duration(rng.Int63n(int64(7*time.Hour)))
		}
		if g < time.Millisecond {
			g = time.Millisecond
		}
		gaps[i] = g
		total += g
	}
	t := o.End.Add(-total)
	out := make([]time.Time, o.Facts)
	for i, g := range gaps {
		t = t.Add(g)
		out[i] = t.Truncate(time.Millisecond)
	}
	if o.Facts > 0 {
		out[o.Facts-1] = o.End
	}
	return out
}

// batchSize draws how many facts one commit carries: mostly a handful, now
// and then a large burst (an import, a sync), mean about max/3.
func batchSize(rng *rand.Rand, max int) int {
	n := int(math.Ceil(rng.Float64() * rng.Float64() * float64(max) * 1.3))
	if n < 1 {
		n = 1
	}
	if n > max {
		n = max
	}
	return n
}

type claimRef struct {
	id     string
	scopes []string
}

type agent struct {
	tool    string
	managed bool // a rally worktree session: a new session id each time it enters
	session string
	present bool
	nsess   int
	claims  []claimRef
}

type handoff struct {
	id, from, target string
	acked            bool
	at               time.Time
}

type sim struct {
	tidy     bool
	rng      *rand.Rand
	agents   []*agent
	files    []string
	dirs     []string
	handoffs []*handoff
	risks    []string     // open risk ids
	pending  []pendingRef // facts of the current batch whose ids we track
}

type pendingRef struct {
	f *facts.Fact
	a *agent
	h *handoff
}

var toolNames = []string{
	"claude_code:impl-1", "claude_code:impl-2", "claude_code:refactor-1", "codex:review-1",
	"codex:impl-3", "gemini:docs-1", "opencode:test-1", "cursor:ui-1",
	"human:alice", "human:bob", "claude_code:wt-api", "codex:wt-migrations",
}

var dirNames = []string{
	"cmd/server", "internal/api", "internal/api/handlers", "internal/store", "internal/store/migrations",
	"internal/auth", "pkg/client", "pkg/wire", "web/src/components", "web/src/pages", "web/src/hooks",
	"docs", "docs/design", "scripts", "deploy/k8s", "testdata/golden",
}

var words = []string{"cache", "router", "session", "token", "schema", "index", "queue", "worker", "retry",
	"config", "metrics", "handler", "parser", "encoder", "limiter", "backoff", "ledger", "snapshot",
	"migration", "fixture", "build", "flaky", "timeout", "deadlock", "race", "leak", "docs", "review"}

func newSim(rng *rand.Rand) *sim {
	s := &sim{rng: rng}
	for i, t := range toolNames {
		s.agents = append(s.agents, &agent{tool: t, managed: i >= 10 || i == 4})
	}
	for _, d := range dirNames {
		s.dirs = append(s.dirs, d)
		for j := 0; j < 12; j++ {
			ext := ".go"
			if strings.HasPrefix(d, "web/") {
				ext = ".tsx"
			} else if strings.HasPrefix(d, "docs") {
				ext = ".md"
			}
			s.files = append(s.files, fmt.Sprintf("%s/%s_%d%s", d, words[(j*7+len(d))%len(words)], j, ext))
		}
	}
	return s
}

func (s *sim) phrase(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[s.rng.Intn(len(words))]
	}
	return strings.Join(ws, " ")
}

// batch makes the facts of one commit, pre-sealed with the clocks Append
// will give them (MaxClock+1+i) so later facts of the batch can refer to
// earlier ones by id.
func (s *sim) batch(maxClock int64, times []time.Time) []*facts.Fact {
	out := make([]*facts.Fact, 0, len(times))
	for i, t := range times {
		f := s.next(t)
		f.V = 1
		f.At = facts.FormatTime(t)
		f.Clock = maxClock + 1 + int64(i)
		if f.Kind == facts.KindClaim && f.Access == "" {
			f.Access = facts.Exclusive
		}
		f.Seal()
		for _, p := range s.pending {
			switch {
			case p.a != nil:
				p.a.claims = append(p.a.claims, claimRef{id: f.ID, scopes: f.Scopes})
			case p.h != nil:
				p.h.id = f.ID
				s.handoffs = append(s.handoffs, p.h)
			default:
				s.risks = append(s.risks, f.ID)
			}
		}
		s.pending = s.pending[:0]
		out = append(out, f)
	}
	return out
}

func (s *sim) pick() *agent {
	// A few agents are much busier than the others.
	i := int(math.Abs(s.rng.NormFloat64()) * float64(len(s.agents)) / 2.5)
	if i >= len(s.agents) {
		i = s.rng.Intn(len(s.agents))
	}
	return s.agents[i]
}

func (s *sim) next(t time.Time) *facts.Fact {
	a := s.pick()
	if !a.present {
		a.present = true
		if a.managed && (!s.tidy || a.nsess == 0) {
			a.nsess++
			a.session = fmt.Sprintf("wt-%s-%d", strings.SplitN(a.tool, ":", 2)[1], a.nsess)
		}
		return &facts.Fact{Kind: facts.KindPresence, Tool: a.tool, Session: a.session, Subject: "entering: " + s.phrase(3)}
	}
	// Answer handoffs addressed to me first, as agents do.
	for i, h := range s.handoffs {
		if h.target != a.tool || s.rng.Float64() < 0.5 {
			continue
		}
		if !h.acked {
			h.acked = true
			if !s.tidy && s.rng.Float64() < 0.01 { // the receipt that never comes
				s.handoffs = append(s.handoffs[:i], s.handoffs[i+1:]...)
				break
			}
			return &facts.Fact{Kind: facts.KindReceipt, Tool: a.tool, Session: a.session, Ref: h.id}
		}
		if !s.tidy && s.rng.Float64() < 0.04 { // acknowledged, never resolved
			s.handoffs = append(s.handoffs[:i], s.handoffs[i+1:]...)
			break
		}
		s.handoffs = append(s.handoffs[:i], s.handoffs[i+1:]...)
		return &facts.Fact{Kind: facts.KindResolve, Tool: a.tool, Session: a.session, Ref: h.id,
			Subject: "done: " + s.phrase(4)}
	}
	r := s.rng.Float64()
	switch {
	case r < 0.20:
		return &facts.Fact{Kind: facts.KindPresence, Tool: a.tool, Session: a.session, Subject: "working on " + s.phrase(3)}
	case r < 0.38:
		if len(a.claims) < 4 {
			if f := s.claim(a); f != nil {
				return f
			}
		}
		fallthrough
	case r < 0.55:
		if len(a.claims) > 0 {
			c := a.claims[0]
			a.claims = a.claims[1:]
			return &facts.Fact{Kind: facts.KindRelease, Tool: a.tool, Session: a.session, Ref: c.id, Scopes: c.scopes,
				Reason: "done"}
		}
		return s.note(a)
	case r < 0.75:
		return s.note(a)
	case r < 0.80:
		return s.handoff(a, t)
	case r < 0.83:
		return &facts.Fact{Kind: facts.KindDecision, Tool: a.tool, Session: a.session, Subject: "decided: " + s.phrase(6)}
	case r < 0.85:
		return &facts.Fact{Kind: facts.KindArtifact, Tool: a.tool, Session: a.session, Subject: "report " + s.phrase(2),
			URI: fmt.Sprintf("https://ci.example.com/run/%d", s.rng.Intn(1e6))}
	case r < 0.86:
		f := &facts.Fact{Kind: facts.KindRisk, Tool: a.tool, Session: a.session, Subject: "risk: " + s.phrase(5), Severity: "medium"}
		s.pending = append(s.pending, pendingRef{f: f})
		return f
	case r < 0.88:
		if len(s.risks) > 0 {
			id := s.risks[0]
			s.risks = s.risks[1:]
			return &facts.Fact{Kind: facts.KindResolve, Tool: a.tool, Session: a.session, Ref: id, Subject: "mitigated"}
		}
		return s.note(a)
	case r < 0.90:
		a.present = false
		a.claims = nil // leave closes the author's claims
		return &facts.Fact{Kind: facts.KindLeave, Tool: a.tool, Session: a.session, Subject: "signing off"}
	default:
		return s.note(a)
	}
}

func (s *sim) note(a *agent) *facts.Fact {
	f := &facts.Fact{Kind: facts.KindNote, Tool: a.tool, Session: a.session, Subject: s.phrase(4 + s.rng.Intn(10))}
	if s.rng.Float64() < 0.3 {
		f.Body = s.phrase(20 + s.rng.Intn(60))
	}
	return f
}

func (s *sim) handoff(a *agent, t time.Time) *facts.Fact {
	var b *agent
	for b == nil || b == a {
		b = s.agents[s.rng.Intn(len(s.agents))]
	}
	f := &facts.Fact{Kind: facts.KindHandoff, Tool: a.tool, Session: a.session, Target: b.tool,
		Subject: "please take " + s.phrase(4), Files: []string{s.files[s.rng.Intn(len(s.files))]}}
	if s.rng.Float64() < 0.3 {
		f.AckBy = facts.FormatTime(t.Add(2 * time.Hour))
	}
	s.pending = append(s.pending, pendingRef{f: f, h: &handoff{from: a.tool, target: b.tool, at: t}})
	return f
}

// claim picks a file (or now and then a directory) that no other owner's
// open claim overlaps, as a well-behaved agent would after reading the room.
func (s *sim) claim(a *agent) *facts.Fact {
	for try := 0; try < 8; try++ {
		var scope string
		if s.rng.Float64() < 0.1 {
			scope = "dir:" + s.dirs[s.rng.Intn(len(s.dirs))]
		} else {
			scope = "file:" + s.files[s.rng.Intn(len(s.files))]
		}
		scopes := []string{scope}
		if s.conflicts(a, scopes) {
			continue
		}
		f := &facts.Fact{Kind: facts.KindClaim, Tool: a.tool, Session: a.session, Scopes: scopes,
			Access: facts.Exclusive, LeaseS: int64(facts.DefaultLease(scopes) / time.Second),
			Subject: "editing " + s.phrase(2)}
		s.pending = append(s.pending, pendingRef{f: f, a: a})
		return f
	}
	return nil
}

func (s *sim) conflicts(me *agent, scopes []string) bool {
	for _, b := range s.agents {
		for _, c := range b.claims {
			if b == me && strings.Join(c.scopes, " ") == strings.Join(scopes, " ") {
				return true // do not renew in the generator: keep claims distinct
			}
			if b == me {
				continue
			}
			if _, _, ok := facts.ScopesConflict(c.scopes, facts.Exclusive, scopes, facts.Exclusive); ok {
				return true
			}
		}
	}
	return false
}
