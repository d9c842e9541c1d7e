package web

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// demoData is demo --json (keys per SPEC §16).
type demoData struct {
	Choices struct {
		Agents     int    `json:"agents"`
		Overlap    bool   `json:"overlap"`
		Handoff    bool   `json:"handoff"`
		Receiver   string `json:"receiver"`
		Layout     string `json:"layout"`
		TimePasses bool   `json:"time_passes"`
	} `json:"choices"`
	Agents []struct {
		Tool, Name, Wants, Task, Dir string
	} `json:"agents"`
	Steps []struct {
		N       int        `json:"n"`
		Command string     `json:"command"`
		Exit    int        `json:"exit"`
		Facts   []factData `json:"facts"`
		Room    roomData   `json:"room"`
		Dir     string     `json:"dir"`
		Explain string     `json:"explain"`
		Stdout  string     `json:"stdout"`
		Stderr  string     `json:"stderr"`
		At      string     `json:"at"`
	} `json:"steps"`
	Counts map[string]int `json:"counts"`
}

type runnerPage struct {
	page
	Demo          *demoData
	Step          int          // 1-based
	Prev, Next    template.URL // "" at the ends: the button is disabled
	Play, Pause   template.URL // this step, playing or not
	Playing       bool         // ?play=1: the page moves to the next step by itself
	Clock         string       // the scenario's clock at this step, and how far from the start
	StepURL       func(int) template.URL
	AgentsChoices []int
	Current       any
}

func (s *Server) runnerPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := &runnerPage{page: page{View: "runner", Token: s.token, Now: s.now().UTC().Format(time.RFC3339)},
		AgentsChoices: []int{2, 3, 4, 5, 6, 7, 8}}
	choices := url.Values{}
	for _, k := range []string{"agents", "overlap", "handoff", "receiver", "layout", "time-passes", "chose"} {
		if v := q.Get(k); v != "" {
			choices.Set(k, v)
		}
	}
	b, err := s.runner.Demo(choices)
	if err == nil {
		var d demoData
		if err = json.Unmarshal(b, &d); err == nil {
			p.Demo = &d
		}
	}
	if err != nil {
		p.Error = err.Error()
	}
	if p.Demo != nil && len(p.Demo.Steps) > 0 {
		p.Step, _ = strconv.Atoi(q.Get("step"))
		p.Step = max(1, min(p.Step, len(p.Demo.Steps)))
		st := &p.Demo.Steps[p.Step-1]
		if at, err := time.Parse(time.RFC3339Nano, st.At); err == nil {
			fillLeases(&st.Room, at)
		}
		p.Playing = q.Get("play") != ""
		p.Clock = scenarioClock(p.Demo.Steps[0].At, st.At)
		linkAs := func(n int, play bool) template.URL {
			v := url.Values{}
			for k, vs := range choices {
				v[k] = vs
			}
			v.Set("token", s.token)
			v.Set("step", strconv.Itoa(n))
			if play {
				v.Set("play", "1")
			}
			return template.URL("/?" + v.Encode())
		}
		link := func(n int) template.URL { return linkAs(n, p.Playing) }
		p.StepURL = func(n int) template.URL { return linkAs(n, false) }
		if p.Step > 1 {
			p.Prev = link(p.Step - 1)
		}
		if p.Step < len(p.Demo.Steps) {
			p.Next = link(p.Step + 1)
		}
		p.Play, p.Pause = linkAs(p.Step, true), linkAs(p.Step, false)
		p.Current = st
		p.Room = &st.Room
	}
	var buf bytes.Buffer
	if err := templates().ExecuteTemplate(&buf, "runner-page", p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// scenarioClock is the time a step ran at on the scenario's own clock
// (RALLY_NOW), and how long after the first step: "2026-01-05 09:03:40
// UTC, +3m40s". The room's times read against it.
func scenarioClock(first, at string) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return at
	}
	out := t.UTC().Format("2006-01-02 15:04:05 UTC")
	t0, err := time.Parse(time.RFC3339Nano, first)
	if err != nil {
		return out
	}
	d := t.Sub(t0).Round(time.Second)
	if d <= 0 {
		return out + ", the start"
	}
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	var b []byte
	if h > 0 {
		b = strconv.AppendInt(b, int64(h), 10)
		b = append(b, 'h')
	}
	if m > 0 {
		b = strconv.AppendInt(b, int64(m), 10)
		b = append(b, 'm')
	}
	if sec > 0 || len(b) == 0 {
		b = strconv.AppendInt(b, int64(sec), 10)
		b = append(b, 's')
	}
	return out + ", +" + string(b)
}
