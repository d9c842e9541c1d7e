package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/git-rally/git-rally/web/webapi"
)

// Reviewer and HandoffRequest are the review half of the source (webapi).
type (
	Reviewer       = webapi.Reviewer
	HandoffRequest = webapi.HandoffRequest
)

// maxHandoffRequest bounds a POST body: a 64 KiB comment and its fields.
const maxHandoffRequest = 80 << 10

// handoff is POST /api/handoff: a person's review sent to an agent as one
// handoff. The guard has checked the token, the Host, the Origin (same or
// absent) and Sec-Fetch-Site; a write also needs POST, the page's
// anti-forgery token in X-Rally-CSRF (a form on another site can send
// neither the header nor read the page that holds the token), a JSON body
// and an identity. Anything else is 403 and writes nothing.
func (s *Server) handoff(w http.ResponseWriter, r *http.Request) {
	if s.tool == "" {
		http.Error(w, "forbidden: "+s.readOnlyWhy, http.StatusForbidden)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "forbidden: POST only", http.StatusForbidden)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Rally-CSRF")), []byte(s.csrf)) != 1 {
		http.Error(w, "forbidden: missing or wrong anti-forgery token (X-Rally-CSRF)", http.StatusForbidden)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "forbidden: the body must be application/json", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxHandoffRequest+1))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var req HandoffRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if len(body) > maxHandoffRequest {
		err = errors.New("the request is over 80 KiB")
	} else if err = dec.Decode(&req); err == nil && dec.More() {
		err = errors.New("one JSON object, please")
	}
	if err == nil && len(req.Files) > 256 {
		err = errors.New("at most 256 files")
	}
	s.api(func(*http.Request) ([]byte, error) {
		if err != nil {
			return nil, &UsageError{Msg: "POST /api/handoff: " + err.Error()}
		}
		return s.rev.Handoff(req)
	})(w, r)
}

// versionWatcher is what the page follows: the ledger's head and a stamp
// of the agent branches, so a commit shows even when it records no fact.
type versionWatcher struct {
	ledger   Watcher
	head     func() (string, error) // the ledger's head at the start
	branches func() (string, error)
	moved    func() // nil, or told (in its own goroutine) when the branches moved
	interval time.Duration
}

func stampOf(branches func() (string, error)) string {
	st, _ := branches()
	sum := sha256.Sum256([]byte(st))
	return hex.EncodeToString(sum[:6])
}

// version joins the ledger head and the branch stamp.
func version(head, stamp string) string { return head + "." + stamp }

func (v *versionWatcher) Changes(ctx context.Context) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		heads := v.ledger.Changes(ctx)
		head, _ := v.head()
		stamp := stampOf(v.branches)
		if v.moved != nil {
			go v.moved()
		}
		t := time.NewTicker(v.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case h, ok := <-heads:
				if !ok {
					return
				}
				head = h
			case <-t.C:
				st := stampOf(v.branches)
				if st == stamp {
					continue
				}
				stamp = st
				if v.moved != nil {
					go v.moved()
				}
			}
			select {
			case out <- version(head, stamp):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// pageVersion is what the page is rendered at: what versionWatcher sends.
func (s *Server) pageVersion() string {
	head, _ := s.src.Head()
	if s.rev == nil {
		return head
	}
	return version(head, stampOf(s.rev.Branches))
}

// termCache shares the terminals' last lines between open pages: each
// live session's terminal is read at most once a termEvery.
type termCache struct {
	mu       sync.Mutex
	at       time.Time
	sessions []string // the live managed sessions the last room showed
	lines    map[string][]string
}

const (
	termEvery = time.Second
	termLines = 12
)

func (c *termCache) setSessions(ss []string) {
	c.mu.Lock()
	c.sessions = ss
	c.mu.Unlock()
}

// read answers each live session's last lines, reading the terminals
// again when the cache is older than termEvery.
func (s *Server) readTerms() (map[string][]string, int64) {
	c := &s.terms
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lines != nil && time.Since(c.at) < termEvery*9/10 {
		return c.lines, c.at.UnixMilli()
	}
	c.lines, c.at = map[string][]string{}, time.Now()
	for _, ss := range c.sessions {
		if ls, err := s.rev.Capture(ss, termLines); err == nil {
			c.lines[ss] = ls
		}
	}
	return c.lines, c.at.UnixMilli()
}

// streamTerms writes a term event for each terminal whose lines changed
// since this stream last sent them. Each carries the time the lines were
// read (as the page's pre.term does in data-at), so the page keeps the
// newer of a rendered terminal and a streamed one.
func (s *Server) streamTerms(w io.Writer, sent map[string]string) {
	terms, at := s.readTerms()
	for ss, ls := range terms {
		b, _ := json.Marshal(ls)
		if sent[ss] == string(b) {
			continue
		}
		sent[ss] = string(b)
		ev, _ := json.Marshal(map[string]any{"session": ss, "lines": ls, "at": at})
		fmt.Fprintf(w, "event: term\ndata: %s\n\n", ev)
	}
}
