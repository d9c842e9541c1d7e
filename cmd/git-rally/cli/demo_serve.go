package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"sync"

	"github.com/git-rally/git-rally/web/webapi"
)

// serveDemo serves the scenario runner until ctx ends; ready, when set,
// gets the URL once it listens.
func serveDemo(ctx context.Context, f *factory, addr string, j *jsonFlags, ready func(url string, srv WebServer)) error {
	if err := webapi.CheckAddr(addr); err != nil {
		return &usageError{Msg: err.Error(), Hint: "git rally demo --serve --addr 127.0.0.1:8377"}
	}
	ln, err := listenLoopback(addr, "git rally demo --serve")
	if err != nil {
		return err
	}
	srv, err := f.server.Web(ln, webapi.Options{Runner: &demoRunner{cache: map[demoChoices][]byte{}}, Now: serveNow})
	if err != nil {
		ln.Close()
		return err
	}
	u := srv.URL(ln)
	if err := printServing(f, j, u); err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintln(f.Err, "git-rally: the scenario runner plays each choice in a throw-away repository; Ctrl-C stops")
	if ready != nil {
		ready(u, srv)
	}
	return srv.Serve(ctx, ln)
}

// demoRunner plays the demo for the runner page, one run at a time (a run
// changes the process's directory and environment), remembering each.
type demoRunner struct {
	mu    sync.Mutex
	cache map[demoChoices][]byte
}

func (d *demoRunner) Demo(q url.Values) ([]byte, error) {
	c := demoChoices{Agents: 2, Receiver: "unmanaged", Layout: "worktrees"}
	chose := q.Get("chose") != ""
	for k, vs := range q {
		v := vs[0]
		var err error
		switch k {
		case "agents":
			c.Agents, err = strconv.Atoi(v)
		case "overlap":
			c.Overlap, err = strconv.ParseBool(v)
		case "handoff":
			c.Handoff, err = strconv.ParseBool(v)
		case "time-passes":
			c.TimePasses, err = strconv.ParseBool(v)
		case "receiver":
			c.Receiver = v
		case "layout":
			c.Layout = v
		default:
			continue
		}
		if err != nil {
			return nil, &usageError{Msg: fmt.Sprintf("%s=%q: %v", k, v, err)}
		}
		// --agents, --layout and --receiver shape the story; only the
		// story choices replace the tour.
		chose = chose || k == "overlap" || k == "handoff" || k == "time-passes"
	}
	if !chose {
		c = demoTour(c)
	}
	c = c.implied()
	if err := c.check(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if b, ok := d.cache[c]; ok {
		return b, nil
	}
	steps, agents := demoScript(c)
	repo, release, err := demoPlace(false)
	if err != nil {
		return nil, err
	}
	results, counts, err := runDemoSteps(repo, steps, agents, nil)
	release()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(demoJSON{Choices: c, Agents: agents, Steps: results, Counts: counts}); err != nil {
		return nil, err
	}
	if len(d.cache) > 32 {
		d.cache = map[demoChoices][]byte{}
	}
	d.cache[c] = buf.Bytes()
	return buf.Bytes(), nil
}
