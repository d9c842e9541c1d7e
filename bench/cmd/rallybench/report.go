package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The bars of issue 2, item 8.
const (
	barClaimFloor = 0.7  // claim ≤ 0.7x the plumbing floor
	barRoomRev    = 10.0 // room ≤ 10x rev-parse
	barRoomMs     = 30.0 // room < 30 ms warm at 100k facts
	barGrowth     = 1.2  // append cost at 100k ≤ 1.2x at 1k
	barSigned     = 1.15 // a signed claim ≤ 1.15x an unsigned one (issue 18)
)

type key struct{ scenario, size, c string }

// results are the samples measure wrote: "scenario size case round value"
// (ms, or MiB for <case>.rss, appends/s for writers.rate).
type results struct {
	samples   map[key]map[int]float64
	scenarios []string
	sizes     []string
}

func loadResults(path string) (*results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &results{samples: map[key]map[int]float64{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		if len(p) != 5 {
			continue
		}
		round, err1 := strconv.Atoi(p[3])
		v, err2 := strconv.ParseFloat(p[4], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		k := key{p[0], p[1], p[2]}
		if r.samples[k] == nil {
			r.samples[k] = map[int]float64{}
		}
		r.samples[k][round] = v
		if !seen["s"+p[0]] {
			seen["s"+p[0]] = true
			r.scenarios = append(r.scenarios, p[0])
		}
		if !seen["z"+p[1]] {
			seen["z"+p[1]] = true
			r.sizes = append(r.sizes, p[1])
		}
	}
	return r, sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// med is the median of a case's samples, 0 when there are none.
func (r *results) med(k key) float64 {
	var v []float64
	for _, x := range r.samples[k] {
		v = append(v, x)
	}
	return median(v)
}

// ratio is the median over rounds of a/b, pairing the samples of the same
// round (the two ran within a second of each other), 0 when none pair.
func (r *results) ratio(a, b key) float64 {
	var v []float64
	for round, x := range r.samples[a] {
		if y, ok := r.samples[b][round]; ok && y > 0 {
			v = append(v, x/y)
		}
	}
	return median(v)
}

func runReport(args []string) error {
	fl := flag.NewFlagSet("report", flag.ExitOnError)
	in := fl.String("in", "", "results file from measure")
	fl.Parse(args)
	res, err := loadResults(*in)
	if err != nil {
		return err
	}
	med := map[key]float64{}
	for k := range res.samples {
		med[k] = res.med(k)
	}
	var scenarios []string
	for _, s := range res.scenarios {
		if _, ok := scenarioCases[s]; !ok || s == "plain" {
			scenarios = append(scenarios, s) // the scenarios of issue 2
		}
	}
	sizes := res.sizes
	var fails []string
	verdict := func(ok bool, what string) string {
		if ok {
			return "ok"
		}
		fails = append(fails, what)
		return "FAIL"
	}
	fmt.Printf("%-9s %-5s | %8s %8s %6s %-4s | %8s %8s %6s %-4s %-4s | %8s %7s\n",
		"scenario", "facts", "claim", "floor", "ratio", "≤0.7", "room", "revparse", "ratio", "≤10", "<30", "inproc", "fsync")
	for _, s := range scenarios {
		for _, z := range sizes {
			g := func(c string) float64 { return med[key{s, z, c}] }
			if g("claim") == 0 {
				continue
			}
			cf := g("claim") / g("floor")
			rr := g("room") / g("revparse")
			roomMs := "-"
			if z == "100k" {
				roomMs = verdict(g("room") < barRoomMs, fmt.Sprintf("%s/%s: room %.1f ms ≥ %.0f ms", s, z, g("room"), barRoomMs))
			}
			fmt.Printf("%-9s %-5s | %6.2fms %6.2fms %5.2fx %-4s | %6.2fms %6.2fms %5.1fx %-4s %-4s | %6.2fms %5.2fms\n",
				s, z, g("claim"), g("floor"), cf,
				verdict(cf <= barClaimFloor, fmt.Sprintf("%s/%s: claim/floor %.2fx > %.1fx", s, z, cf, barClaimFloor)),
				g("room"), g("revparse"), rr,
				verdict(rr <= barRoomRev, fmt.Sprintf("%s/%s: room/rev-parse %.1fx > %.0fx", s, z, rr, barRoomRev)),
				roomMs, g("inproc"), g("fsync"))
		}
	}
	fmt.Println()
	fmt.Println("append cost growth, 100k facts against 1k (bar ≤ 1.2x; the floor's, the same append done by git in the")
	fmt.Println("same repositories, shows what the repositories themselves add):")
	for _, s := range scenarios {
		a, b := med[key{s, "1k", "claim"}], med[key{s, "100k", "claim"}]
		ia, ib := med[key{s, "1k", "inproc"}], med[key{s, "100k", "inproc"}]
		fa, fb := med[key{s, "1k", "floor"}], med[key{s, "100k", "floor"}]
		if a == 0 || b == 0 {
			continue
		}
		fmt.Printf("  %-9s claim process %6.2fms -> %6.2fms = %4.2fx %-4s   in-process append %4.2fx   floor %4.2fx\n",
			s, a, b, b/a, verdict(b/a <= barGrowth, fmt.Sprintf("%s: claim growth 100k/1k %.2fx > %.1fx", s, b/a, barGrowth)),
			ib/ia, fb/fa)
	}
	fmt.Println()
	fmt.Println("signed claims (rally.sign with an ed25519 key file) against unsigned ones (bar ≤ 1.15x):")
	for _, s := range scenarios {
		for _, z := range sizes {
			a, b := med[key{s, z, "claim"}], med[key{s, z, "claim-signed"}]
			if a == 0 || b == 0 {
				continue
			}
			fmt.Printf("  %-9s %-5s claim %6.2fms  signed %6.2fms = %4.2fx %s\n", s, z, a, b, b/a,
				verdict(b/a <= barSigned, fmt.Sprintf("%s/%s: signed claim %.2fx > %.2fx", s, z, b/a, barSigned)))
		}
	}
	fmt.Println()
	if len(fails) == 0 {
		fmt.Println("issue 2's bars: all met")
	} else {
		fmt.Printf("issue 2's bars: %d not met:\n", len(fails))
		for _, f := range fails {
			fmt.Println("  " + f)
		}
	}
	fmt.Println()
	issue14Table(res)
	return nil
}
