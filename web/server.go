package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/web/webapi"
)

// The types the command line sees live in package webapi, which links
// no net/http.
type (
	Source       = webapi.Source
	CommandError = webapi.CommandError
	Options      = webapi.Options
	Runner       = webapi.Runner
	Watcher      = webapi.Watcher
	PollWatcher  = webapi.PollWatcher
	HeadWaiter   = webapi.HeadWaiter
	WaitWatcher  = webapi.WaitWatcher
)

// UsageError is bad input (a choice out of range, a malformed request):
// the API answers 400. It is the one usage error of the whole program,
// the command line's exit 2.
type UsageError = facts.UsageError

// ErrUnavailable is a view this build cannot answer.
var ErrUnavailable = webapi.ErrUnavailable

// NewToken is 128 random bits in hex.
func NewToken() (string, error) { return webapi.NewToken() }

// Server is the web room behind its guard.
type Server struct {
	src     Source
	rev     Reviewer // nil: the source shows no work and takes no review
	runner  Runner
	hub     *hub
	now     func() time.Time
	token   string
	allowed map[string]bool // Host values that name this server

	// Writing (SPEC §16): the identity reviews are sent as ("" when the
	// page is read-only, readOnlyWhy saying why) and the anti-forgery
	// token every write carries in X-Rally-CSRF.
	tool, readOnlyWhy string
	csrf              string

	terms termCache

	// Served counts the requests that passed the guard: an idle page
	// adds none.
	Served atomic.Int64
}

// New makes a server for a listener already bound to loopback.
func New(ln net.Listener, o Options) (*Server, error) {
	var err error
	if o.Token == "" {
		t, err := NewToken()
		if err != nil {
			return nil, err
		}
		o.Token = t
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Watcher == nil && o.Source != nil {
		o.Watcher = &PollWatcher{Head: o.Source.Head, Interval: 200 * time.Millisecond}
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	s := &Server{src: o.Source, runner: o.Runner, now: o.Now, token: o.Token, allowed: map[string]bool{
		"127.0.0.1:" + port: true, "localhost:" + port: true, "[::1]:" + port: true}}
	if ip := ln.Addr().(*net.TCPAddr).IP; ip != nil {
		s.allowed[net.JoinHostPort(ip.String(), port)] = true
	}
	s.rev, _ = o.Source.(Reviewer)
	s.tool, s.readOnlyWhy, s.csrf = o.Tool, o.ReadOnlyWhy, o.CSRF
	switch {
	case o.ReadOnly:
		s.tool, s.readOnlyWhy = "", "read-only: serve was started with --read-only"
	case s.rev == nil:
		s.tool, s.readOnlyWhy = "", "read-only: this build cannot send reviews"
	case s.tool == "" && s.readOnlyWhy == "":
		s.readOnlyWhy = "read-only: no identity to send a review as (git rally serve --tool human:<you>)"
	}
	if s.csrf == "" {
		if s.csrf, err = NewToken(); err != nil {
			return nil, err
		}
	}
	w := o.Watcher
	if s.rev != nil && w != nil {
		vw := &versionWatcher{ledger: w, head: o.Source.Head, branches: s.rev.Branches, interval: 250 * time.Millisecond}
		if m, ok := s.rev.(webapi.BranchMover); ok {
			vw.moved = m.BranchesMoved
		}
		w = vw
	}
	s.hub = newHub(w)
	return s, nil
}

// URL is the address to open, token included.
func (s *Server) URL(ln net.Listener) string {
	return fmt.Sprintf("http://%s/?token=%s", ln.Addr().String(), s.token)
}

// Serve answers on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	if s.src != nil {
		go s.hub.run(ctx)
	}
	go func() {
		<-ctx.Done()
		sc, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(sc)
		hs.Close()
	}()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler is every route behind the guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	if s.src == nil {
		mux.HandleFunc("GET /{$}", s.runnerPage)
		mux.HandleFunc("GET /api/demo", s.api(func(r *http.Request) ([]byte, error) { return s.runner.Demo(r.URL.Query()) }))
		return s.guard(mux)
	}
	mux.HandleFunc("GET /{$}", s.page("room"))
	mux.HandleFunc("GET /history", s.page("history"))
	mux.HandleFunc("GET /worktrees", s.page("worktrees"))
	mux.HandleFunc("GET /plans", s.page("plans"))
	mux.HandleFunc("GET /api/room", s.api(func(r *http.Request) ([]byte, error) { return s.src.Room() }))
	mux.HandleFunc("GET /api/log", s.api(func(r *http.Request) ([]byte, error) {
		kind, tool, n := logQuery(r)
		return s.src.Log(kind, tool, n)
	}))
	mux.HandleFunc("GET /api/worktrees", s.api(func(r *http.Request) ([]byte, error) { return s.src.Worktrees() }))
	mux.HandleFunc("GET /api/plan", s.api(func(r *http.Request) ([]byte, error) { return s.src.Plan(r.URL.Query().Get("plan")) }))
	mux.HandleFunc("GET /api/diff", s.api(func(r *http.Request) ([]byte, error) {
		if s.rev == nil {
			return nil, ErrUnavailable
		}
		return s.rev.Diff(r.URL.Query().Get("branch"))
	}))
	mux.HandleFunc("/api/handoff", s.handoff)
	mux.HandleFunc("GET /events", s.events)
	return s.guard(mux)
}

// writePath is the one endpoint that writes.
const writePath = "/api/handoff"

// guard refuses what did not come from this page on this machine: a wrong
// or missing token, a Host that is not this server's loopback address (DNS
// rebinding), a foreign Origin, a cross-site fetch, and any method that
// could change something.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if !s.allowed[r.Host] {
			http.Error(w, "forbidden: this server answers only to its own loopback address", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.allowed[strings.TrimPrefix(o, "http://")] {
			http.Error(w, "forbidden: foreign origin", http.StatusForbidden)
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			http.Error(w, "forbidden: cross-site request", http.StatusForbidden)
			return
		}
		tok := r.URL.Query().Get("token")
		if tok == "" {
			tok = r.Header.Get("X-Rally-Token")
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1 {
			http.Error(w, "forbidden: open the URL git rally serve printed (it carries the token)", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !(r.Method == http.MethodPost && r.URL.Path == writePath) {
			http.Error(w, "forbidden: only POST "+writePath+" writes", http.StatusForbidden)
			return
		}
		s.Served.Add(1)
		next.ServeHTTP(w, r)
	})
}

func logQuery(r *http.Request) (kind, tool string, n int) {
	q := r.URL.Query()
	n, _ = strconv.Atoi(q.Get("n"))
	if n <= 0 || n > 5000 {
		n = 200
	}
	return q.Get("kind"), q.Get("tool"), n
}

func (s *Server) api(get func(*http.Request) ([]byte, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := get(r)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		var ue *UsageError
		if errors.As(err, &ue) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "{\"error\": {\"code\": \"usage\", \"message\": %q}}\n", err.Error())
			return
		}
		var ce *CommandError
		if errors.As(err, &ce) && len(ce.JSON) > 0 {
			switch ce.Exit {
			case 2:
				w.WriteHeader(http.StatusBadRequest)
			case 3:
				w.WriteHeader(http.StatusConflict)
			default:
				w.WriteHeader(http.StatusInternalServerError)
			}
			w.Write(ce.JSON)
			return
		}
		if errors.Is(err, ErrUnavailable) {
			w.WriteHeader(http.StatusNotImplemented)
			fmt.Fprintf(w, "{\"error\": {\"code\": \"unavailable\", \"message\": %q}}\n", err.Error())
			return
		}
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "{\"error\": {\"code\": \"failed\", \"message\": %q}}\n", err.Error())
			return
		}
		w.Write(b)
	}
}

// events streams the ledger's head: once on connect, then on every change.
// An idle page costs one open stream and a comment every 25 s.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	ch, cancel := s.hub.subscribe()
	defer cancel()
	fmt.Fprintf(w, "retry: 1000\nevent: head\ndata: %s\n\n", s.pageVersion())
	fl.Flush()
	keep := time.NewTicker(25 * time.Second)
	defer keep.Stop()
	// The terminals' last lines, live: read on the server, at most once a
	// second for all pages, sent only when they change.
	var terms <-chan time.Time
	sent := map[string]string{}
	if s.rev != nil && r.URL.Query().Get("terms") == "1" {
		tt := time.NewTicker(termEvery)
		defer tt.Stop()
		terms = tt.C
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case h, ok := <-ch:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: head\ndata: %s\n\n", h)
			fl.Flush()
		case <-terms:
			s.streamTerms(w, sent)
			fl.Flush()
		case <-keep.C:
			fmt.Fprint(w, ": idle\n\n")
			fl.Flush()
		}
	}
}
