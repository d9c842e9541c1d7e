package web

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The work section (SPEC §16): one card per agent branch and managed
// session, with its activity, its terminal, its diff, its predicted
// conflicts and the reviews sent to it.

// diffData is GET /api/diff.
type diffData struct {
	Branch, Owner, Base, Revision string
	BaseHead                      string `json:"base_head"`
	Files                         []struct {
		Path           string
		Added, Removed int
		Binary         bool
	} `json:"files"`
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated"`
	Conflicts []struct {
		Branch, Owner string
		Files         []string
	} `json:"conflicts"`
}

// card is one agent's work.
type card struct {
	Branch, Session, Tool, Agent, State string
	Activity, ActivitySince             string
	Live                                bool // a managed session whose terminal runs
	Term                                []string
	TermAt                              int64 // when Term was read (Unix ms)
	Diff                                *diffData
	DiffError                           string
	Files                               []*diffFile
	Added, Removed                      int
	Reviews                             []*review // on the whole change
}

// diffFile is one file of a diff, its lines ready to show.
type diffFile struct {
	Path           string
	Added, Removed int
	Binary         bool
	Lines          []*diffLine
	Reviews        []*review // on the file
}

type diffLine struct {
	Kind     string // add, del, ctx, hunk, meta
	Old, New int    // line numbers; 0 when the side has none
	Text     string
	Reviews  []*review
}

// review is a handoff to the card's tool that carries a revision: a
// person's comment, with its state and the answer that gave it.
type review struct {
	ID, From, Target, Subject, Body, Revision, At string
	Token                                         string // for the link to the answer
	State                                         string // open, acknowledged, resolved, rejected
	Anchor                                        string // path:line, path, or "" for the whole change
	Answer                                        *factData
	AnswerBody                                    string
}

// parseDiff splits a unified diff into files (in the order of files,
// which git printed from the same diff) and numbered lines.
func parseDiff(d *diffData) []*diffFile {
	out := make([]*diffFile, 0, len(d.Files))
	for _, f := range d.Files {
		out = append(out, &diffFile{Path: f.Path, Added: f.Added, Removed: f.Removed, Binary: f.Binary})
	}
	var cur *diffFile
	i := -1
	old, nw := 0, 0
	inHunk := false
	for _, l := range strings.Split(strings.TrimSuffix(d.Diff, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			i++
			inHunk = false
			if i < len(out) {
				cur = out[i]
			} else {
				cur = &diffFile{Path: strings.TrimPrefix(l, "diff --git ")}
				out = append(out, cur)
			}
			continue
		case cur == nil:
			continue
		case strings.HasPrefix(l, "@@"):
			inHunk = true
			old, nw = hunkStart(l)
			cur.Lines = append(cur.Lines, &diffLine{Kind: "hunk", Text: l})
			continue
		case !inHunk:
			if strings.HasPrefix(l, "Binary files") || strings.HasPrefix(l, "new file") || strings.HasPrefix(l, "deleted file") {
				cur.Lines = append(cur.Lines, &diffLine{Kind: "meta", Text: l})
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "+"):
			cur.Lines = append(cur.Lines, &diffLine{Kind: "add", New: nw, Text: l[1:]})
			nw++
		case strings.HasPrefix(l, "-"):
			cur.Lines = append(cur.Lines, &diffLine{Kind: "del", Old: old, Text: l[1:]})
			old++
		case strings.HasPrefix(l, `\`):
			cur.Lines = append(cur.Lines, &diffLine{Kind: "meta", Text: l})
		default:
			cur.Lines = append(cur.Lines, &diffLine{Kind: "ctx", Old: old, New: nw, Text: strings.TrimPrefix(l, " ")})
			old++
			nw++
		}
	}
	return out
}

// hunkStart reads "@@ -a,b +c,d @@" as the first old and new line numbers.
func hunkStart(h string) (old, nw int) {
	f := strings.Fields(h)
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	if len(f) >= 3 && strings.HasPrefix(f[1], "-") && strings.HasPrefix(f[2], "+") {
		return num(f[1]), num(f[2])
	}
	return 0, 0
}

// place puts each review beside the line, the file or the change it is
// about.
func (c *card) place(rs []*review) {
	for _, r := range rs {
		path, line := r.Anchor, 0
		if p, n, ok := strings.Cut(r.Anchor, ":"); ok {
			if v, err := strconv.Atoi(n); err == nil {
				path, line = p, v
			}
		}
		placed := false
		for _, f := range c.Files {
			if path == "" || f.Path != path {
				continue
			}
			if line > 0 {
				for _, l := range f.Lines {
					if l.New == line && (l.Kind == "add" || l.Kind == "ctx") {
						l.Reviews = append(l.Reviews, r)
						placed = true
						break
					}
				}
			}
			if !placed {
				f.Reviews = append(f.Reviews, r)
				placed = true
			}
			break
		}
		if !placed {
			c.Reviews = append(c.Reviews, r)
		}
	}
}

// reviews reads the handoffs that carry a revision, by target, with their
// state from the answers their targets wrote.
func (s *Server) reviews() map[string][]*review {
	out := map[string][]*review{}
	var hs []factData
	b, err := s.src.Log("handoff", "", 2000)
	if err != nil || json.Unmarshal(b, &hs) != nil {
		return out
	}
	type answer struct {
		factData
		Body string `json:"body"`
	}
	byRef := map[string][]answer{}
	for _, k := range []string{"receipt", "resolve", "artifact"} {
		var as []answer
		if b, err := s.src.Log(k, "", 5000); err == nil && json.Unmarshal(b, &as) == nil {
			for _, a := range as {
				byRef[a.Ref] = append(byRef[a.Ref], a)
			}
		}
	}
	for _, h := range hs {
		if h.Revision == "" {
			continue
		}
		r := &review{ID: h.ID, From: h.Tool, Target: h.Target, Subject: h.Subject, Body: h.Body, Revision: h.Revision, At: h.At,
			State: "open", Token: s.token}
		if len(h.Files) > 0 {
			r.Anchor = h.Files[0]
		}
		for _, a := range byRef[h.ID] {
			if a.Tool == h.Tool || (h.Target != "all" && a.Tool != h.Target) {
				continue // only the target's answer counts
			}
			st := "acknowledged"
			switch {
			case a.Kind == "resolve" || a.Kind == "artifact":
				st = "resolved"
			case a.Kind == "receipt" && a.Status == "rejected": // receipt --reject
				st = "rejected"
			}
			if rank(st) >= rank(r.State) {
				a := a
				r.State, r.Answer, r.AnswerBody = st, &a.factData, a.Body
			}
		}
		out[h.Target] = append(out[h.Target], r)
	}
	return out
}

func rank(state string) int {
	return map[string]int{"open": 0, "acknowledged": 1, "resolved": 2, "rejected": 2}[state]
}

// work builds the cards: every rally worktree's branch, and every managed
// session (one without a worktree shows its terminal only).
func (s *Server) work(room *roomData) []*card {
	if s.rev == nil {
		return nil
	}
	var cards []*card
	bySession := map[string]*card{}
	for _, w := range room.Worktrees {
		if !strings.HasPrefix(w.Branch, "rally/") || w.Status == "removed" {
			continue
		}
		c := &card{Branch: w.Branch, Session: w.Session, Tool: w.Tool}
		cards = append(cards, c)
		if w.Session != "" {
			bySession[w.Session] = c
		}
	}
	var live []string
	for _, ss := range room.Sessions {
		c := bySession[ss.Session]
		if c == nil {
			c = &card{Session: ss.Session}
			cards = append(cards, c)
		}
		c.Tool, c.Agent, c.State, c.Activity, c.ActivitySince = ss.Tool, ss.Agent, ss.State, ss.Activity, ss.ActivitySince
		if ss.State == "live" {
			c.Live = true
			live = append(live, ss.Session)
		}
	}
	s.terms.setSessions(live)
	var terms map[string][]string
	var termAt int64
	if len(live) > 0 {
		terms, termAt = s.readTerms()
	}
	acts := map[string]int{}
	for i, p := range room.Peers {
		acts[p.Tool+"@"+p.Session] = i
	}
	reviews := s.reviews()
	for _, c := range cards {
		if i, ok := acts[c.Tool+"@"+c.Session]; ok {
			p := room.Peers[i]
			if c.Activity == "" {
				c.Activity, c.ActivitySince = p.Activity, p.ActivitySince
			}
		}
		c.Term, c.TermAt = terms[c.Session], termAt
		if c.Branch == "" {
			continue
		}
		b, err := s.rev.Diff(c.Branch)
		if err != nil {
			c.DiffError = err.Error()
			continue
		}
		var d diffData
		if err := json.Unmarshal(b, &d); err != nil {
			c.DiffError = err.Error()
			continue
		}
		c.Diff = &d
		c.Files = parseDiff(&d)
		for _, f := range d.Files {
			c.Added += f.Added
			c.Removed += f.Removed
		}
		c.place(reviews[c.Tool])
	}
	return cards
}
