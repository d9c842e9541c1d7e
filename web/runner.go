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
	Step          int // 1-based
	Prev, Next    template.URL
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
		link := func(n int) template.URL {
			v := url.Values{}
			for k, vs := range choices {
				v[k] = vs
			}
			v.Set("token", s.token)
			v.Set("step", strconv.Itoa(n))
			return template.URL("/?" + v.Encode())
		}
		p.StepURL = link
		p.Prev, p.Next = link(max(1, p.Step-1)), link(min(len(p.Demo.Steps), p.Step+1))
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
