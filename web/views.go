package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	return http.FileServer(http.FS(sub))
}

// templates are parsed on first use, not at start-up: every git rally
// process links this package, and only serve renders a page.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"join":     strings.Join,
		"short":    shortID,
		"unscoped": unscoped,
		"words":    func(s string) string { return strings.ReplaceAll(s, "-", " ") },
		"wt":       worktreePath,
		"wtin":     worktreePathsIn,
	}).ParseFS(templateFS, "templates/*.html"))
})

// unscoped: a blocker with no scope, or workspace:*, covers the room.
func unscoped(scopes []string) bool {
	for _, s := range scopes {
		if s == "workspace:*" {
			return true
		}
	}
	return len(scopes) == 0
}

// The room as room --json prints it (keys per SPEC §8).
type roomData struct {
	Head  string `json:"head"`
	Clock int64  `json:"clock"`
	Lead  string `json:"lead"` // null: ""
	Peers []struct {
		Tool, Session, State, Subject string
		LastSeen                      string `json:"last_seen"`
		// What the peer is doing (SPEC §13), when known.
		Activity      string `json:"activity"`
		ActivitySince string `json:"activity_since"`
	} `json:"peers"`
	Claims   []claimData `json:"claims"`
	Handoffs []struct {
		ID, From, Target, Subject, At, State, Reason string
		AckBy                                        string          `json:"ack_by"`
		Overdue                                      bool            `json:"overdue"`
		Delivery                                     json.RawMessage `json:"delivery"`
	} `json:"handoffs"`
	Blockers  []noteData `json:"blockers"`
	Risks     []noteData `json:"risks"`
	Worktrees []struct {
		Name, Path, Branch, Tool, Session, Status string
	} `json:"worktrees"`
	Plans []struct {
		Plan, Lead string
		Done       int            `json:"done"`
		Total      int            `json:"total"`
		ByState    map[string]int `json:"by_state"`
		CanClose   bool           `json:"can_close"`
	} `json:"plans"`
	Sessions []struct {
		Session, Tool, Agent, State, Worktree string
		Activity                              string `json:"activity"`
		ActivitySince                         string `json:"activity_since"`
	} `json:"sessions"`
	Totals struct {
		Facts     int            `json:"facts"`
		Retracted int            `json:"retracted"`
		ByKind    map[string]int `json:"by_kind"`
	} `json:"totals"`
}

type claimData struct {
	ID, Tool, Session, Access, Subject, At string
	Scopes                                 []string `json:"scopes"`
	LeaseExpiresAt                         string   `json:"lease_expires_at"`
	LeaseState                             string   `json:"lease_state"`
	OwnerState                             string   `json:"owner_state"`
	Contested                              bool     `json:"contested"`
	ContestedBy                            string   `json:"contested_by"`
	// Filled in for the page: the lease bar.
	LeaseStart string
	LeaseLeft  int // percent of the window left
}

// boardData is plan status --json (keys per SPEC §15).
type boardData struct {
	Plan, Goal, Lead, Fact string
	Done                   int        `json:"done"`
	Total                  int        `json:"total"`
	CanClose               bool       `json:"can_close"`
	Closed                 bool       `json:"closed"`
	Tasks                  []taskData `json:"tasks"`
	Columns                [4]struct {
		Name  string
		Tasks []taskData
	} `json:"-"`
}

type taskData struct {
	ID, Goal, State, Owner, Check, Agent string
	Owns                                 []string `json:"owns"`
	DependsOn                            []string `json:"depends_on"`
	WaitingOn                            []string `json:"waiting_on"`
	Report                               any      `json:"report"`
}

type noteData struct {
	ID, Kind, Tool, Subject, Severity, Ref, At string
	Scopes                                     []string `json:"scopes"`
}

// factData is one line of log --json (keys per SPEC §2).
type factData struct {
	ID, Kind, Tool, Session, At, Ref, Target, Subject, Reason, Severity, Status string
	Revision, Body                                                              string
	Files                                                                       []string `json:"files"`
	Clock                                                                       int64    `json:"clock"`
	Scopes                                                                      []string `json:"scopes"`
	Commit                                                                      string   `json:"-"`
	Retracted                                                                   bool     `json:"-"`
}

type page struct {
	View, Token, Head, Error string
	// The review: the identity comments are sent as ("" read-only, and
	// why), the anti-forgery token, one card per agent's work.
	Author, ReadOnlyWhy, CSRF string
	Work                      []*card
	NeedsInput                []*card
	Now                       string
	Room                      *roomData
	Facts                     []factData
	Kinds, Tools              []string
	Kind, Tool                string
	Plan                      any
	Boards                    []*boardData
	Unavailable               bool
}

func (s *Server) page(view string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := &page{View: view, Token: s.token, Now: s.now().UTC().Format(time.RFC3339),
			Author: s.tool, ReadOnlyWhy: s.readOnlyWhy}
		if s.tool != "" {
			p.CSRF = s.csrf
		}
		p.Head = s.pageVersion()
		if err := s.fill(p, r); err != nil {
			p.Error = err.Error()
		}
		name := "page"
		if r.URL.Query().Get("part") == "main" {
			name = "main"
		}
		var buf bytes.Buffer
		if err := templates().ExecuteTemplate(&buf, name, p); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(buf.Bytes())
	}
}

func (s *Server) fill(p *page, r *http.Request) error {
	switch p.View {
	case "room":
		room, err := s.room()
		p.Room = room
		if err != nil {
			return err
		}
		p.Work = s.work(room)
		for _, c := range p.Work {
			if c.Activity == "needs-input" {
				p.NeedsInput = append(p.NeedsInput, c)
			}
		}
		return nil
	case "history":
		return s.history(p, r)
	case "worktrees":
		b, err := s.src.Worktrees()
		if err != nil {
			return err
		}
		var v map[string]any
		err = json.Unmarshal(b, &v)
		relativePlan(v)
		p.Plan = v
		return err
	case "plans":
		room, err := s.room()
		if err != nil {
			return err
		}
		for _, pl := range room.Plans {
			b, err := s.src.Plan(pl.Plan)
			if errors.Is(err, ErrUnavailable) {
				p.Unavailable = true
				return nil
			}
			if err != nil {
				return err
			}
			var bd boardData
			if err := json.Unmarshal(b, &bd); err != nil {
				return err
			}
			for _, t := range bd.Tasks {
				col := map[string]int{"waiting": 0, "ready": 1, "taken": 2, "done": 3}[t.State]
				bd.Columns[col].Tasks = append(bd.Columns[col].Tasks, t)
			}
			for i, n := range []string{"waiting", "ready", "taken", "done"} {
				bd.Columns[i].Name = n
			}
			p.Boards = append(p.Boards, &bd)
		}
	}
	return nil
}

func (s *Server) room() (*roomData, error) {
	b, err := s.src.Room()
	if err != nil {
		return nil, err
	}
	var room roomData
	if err := json.Unmarshal(b, &room); err != nil {
		return nil, err
	}
	fillLeases(&room, s.now())
	return &room, nil
}

// fillLeases computes each claim's lease bar at now.
func fillLeases(room *roomData, now time.Time) {
	seen := map[string]string{}
	for _, p := range room.Peers {
		seen[p.Tool+"@"+p.Session] = p.LastSeen
	}
	for i := range room.Claims {
		c := &room.Claims[i]
		start := c.At
		if ls := seen[c.Tool+"@"+c.Session]; ls > start {
			start = ls
		}
		c.LeaseStart = start
		c.LeaseLeft = leaseLeft(start, c.LeaseExpiresAt, now)
	}
}

func leaseLeft(start, end string, now time.Time) int {
	a, err1 := time.Parse(time.RFC3339Nano, start)
	b, err2 := time.Parse(time.RFC3339Nano, end)
	if err1 != nil || err2 != nil || !b.After(a) {
		return 0
	}
	left := int(100 * b.Sub(now) / b.Sub(a))
	return max(0, min(100, left))
}

func (s *Server) history(p *page, r *http.Request) error {
	kind, tool, n := logQuery(r)
	p.Kind, p.Tool = kind, tool
	if room, err := s.room(); err == nil {
		for k := range room.Totals.ByKind {
			p.Kinds = append(p.Kinds, k)
		}
		for _, peer := range room.Peers {
			p.Tools = append(p.Tools, peer.Tool)
		}
	}
	b, err := s.src.Log(kind, tool, n)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &p.Facts); err != nil {
		return err
	}
	// A retraction is newer than what it retracts, so the newest facts
	// carry the retractions of their own; a filter can hide them, and then
	// they are read on their own.
	retracted := map[string]bool{}
	rs := p.Facts
	if kind != "" || tool != "" {
		rs = nil
		if rb, err := s.src.Log("retract", "", 0); err == nil {
			json.Unmarshal(rb, &rs)
		}
	}
	for _, f := range rs {
		if f.Kind == "retract" {
			retracted[f.Ref] = true
		}
	}
	ids := make([]string, len(p.Facts))
	for i, f := range p.Facts {
		ids[i] = f.ID
	}
	commits, _ := s.src.Commits(ids)
	tools := map[string]bool{}
	for _, t := range p.Tools {
		tools[t] = true
	}
	for i := range p.Facts {
		f := &p.Facts[i]
		f.Retracted = retracted[f.ID]
		f.Commit = commits[f.ID]
		if !tools[f.Tool] {
			tools[f.Tool] = true
			p.Tools = append(p.Tools, f.Tool)
		}
	}
	// Newest first reads like git log.
	for i, j := 0, len(p.Facts)-1; i < j; i, j = i+1, j-1 {
		p.Facts[i], p.Facts[j] = p.Facts[j], p.Facts[i]
	}
	sort.Strings(p.Kinds)
	sort.Strings(p.Tools)
	return nil
}

// rallyWorktrees is where rally makes agent worktrees in the main checkout.
const rallyWorktrees = "/.rally/worktrees/"

// worktreePath shows a rally worktree from the main checkout
// (.rally/worktrees/<name>), as a person there would type it; any other
// path as it is.
func worktreePath(p string) string {
	if i := strings.LastIndex(p, rallyWorktrees); i >= 0 {
		return p[i+1:]
	}
	return p
}

// worktreePathsIn shows every rally worktree path in a text (a session's
// subject) from the main checkout.
func worktreePathsIn(s string) string {
	for i := strings.Index(s, rallyWorktrees); i >= 0; i = strings.Index(s, rallyWorktrees) {
		start := strings.LastIndexAny(s[:i], " \t\n") + 1
		s = s[:start] + s[i+1:]
	}
	return s
}

// relativePlan shows the worktree plan's paths and commands from the main
// checkout: the prefix every rally worktree shares is dropped.
func relativePlan(v map[string]any) {
	rows, _ := v["branches"].([]any)
	root := ""
	for _, r := range rows {
		row, _ := r.(map[string]any)
		if p, _ := row["path"].(string); strings.Contains(p, rallyWorktrees) {
			root = p[:strings.LastIndex(p, rallyWorktrees)+1]
			break
		}
	}
	if root == "" {
		return
	}
	for _, r := range rows {
		row, _ := r.(map[string]any)
		for _, k := range []string{"path", "next_command"} {
			if s, ok := row[k].(string); ok {
				row[k] = strings.ReplaceAll(s, root, "")
			}
		}
	}
}

func shortID(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}
