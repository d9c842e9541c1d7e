package main

import (
	"fmt"
	"strings"
)

// The bars of issue 14, each checked at every ledger size measured.
const (
	barClaimFloor4  = 0.6  // git rally claim ≤ 0.6x the 4-process floor
	barDirectFloor4 = 0.45 // git-rally claim ≤ 0.45x the 4-process floor
	barVersionHello = 1.4  // git-rally version ≤ 1.4x a static hello world
	barRoomOpen     = 2.0  // room with 1,619 open claims ≤ 2x room with 20
	barClaimOpen    = 1.2  // claim with 1,619 open claims ≤ 1.2x with 20
	barLogMs        = 30.0 // log --json -n 10 ≤ 30 ms
	barLogRSS       = 32.0 // ... ≤ 32 MiB
	barColdMs       = 1000.0
	barColdRSS      = 100.0
	barWritersRate  = 180.0 // 8 writers x 200 appends: ≥ 180 appends/s
	barWritersP99   = 80.0  // ... p99 ≤ 80 ms
)

// tableRow is one figure of the summary table: a value per ledger size,
// and a bar every value must meet (none: the row informs).
type tableRow struct {
	figure string
	bar    string
	format string // of a value
	value  func(size string) (float64, bool)
	ok     func(v float64) bool // nil: no bar
}

// issue14Table prints the summary table: every figure of issue 14's table
// at every size, its bar and PASS or FAIL.
func issue14Table(r *results) {
	get := func(s, c string) func(string) (float64, bool) {
		return func(z string) (float64, bool) {
			k := key{s, z, c}
			return r.med(k), len(r.samples[k]) > 0
		}
	}
	ratio := func(sa, ca, sb, cb string) func(string) (float64, bool) {
		return func(z string) (float64, bool) {
			a, b := key{sa, z, ca}, key{sb, z, cb}
			v := r.ratio(a, b)
			return v, v > 0
		}
	}
	le := func(bar float64) func(float64) bool { return func(v float64) bool { return v <= bar } }
	ge := func(bar float64) func(float64) bool { return func(v float64) bool { return v >= bar } }
	rows := []tableRow{
		{"git rally claim / 4-process floor", fmt.Sprintf("≤ %.2g", barClaimFloor4), "%.2f", ratio("plain", "claim", "plain", "floor4"), le(barClaimFloor4)},
		{"git rally claim / 7-process floor (issue 2)", fmt.Sprintf("≤ %.2g", barClaimFloor), "%.2f", ratio("plain", "claim", "plain", "floor"), le(barClaimFloor)},
		{"git-rally claim / 4-process floor", fmt.Sprintf("≤ %.2g", barDirectFloor4), "%.2f", ratio("plain", "claim-direct", "plain", "floor4"), le(barDirectFloor4)},
		{"git-rally claim / 7-process floor", "", "%.2f", ratio("plain", "claim-direct", "plain", "floor"), nil},
		{"  git rally claim, ms", "", "%.2f", get("plain", "claim"), nil},
		{"  git-rally claim, ms", "", "%.2f", get("plain", "claim-direct"), nil},
		{"  4-process floor, ms", "", "%.2f", get("plain", "floor4"), nil},
		{"  7-process floor, ms", "", "%.2f", get("plain", "floor"), nil},
		{"git-rally version / static Go hello world", fmt.Sprintf("≤ %.2g", barVersionHello), "%.2f", ratio("plain", "version", "plain", "hello"), le(barVersionHello)},
		{"  git-rally version, ms", "", "%.2f", get("plain", "version"), nil},
		{"  hello world, ms", "", "%.2f", get("plain", "hello"), nil},
		{"  probe: an init importing only os / hello", "", "%.2f", ratio("plain", "probe-first", "plain", "hello"), nil},
		{"  probe: the ledger packages, no cobra / hello", "", "%.2f", ratio("plain", "probe-hotdeps", "plain", "hello"), nil},
		{"room --json, 1,619 open claims / 20", fmt.Sprintf("≤ %.2g", barRoomOpen), "%.2f", ratio("open1619", "room", "open20", "room"), le(barRoomOpen)},
		{"  room, 1,619 open claims, ms", "", "%.2f", get("open1619", "room"), nil},
		{"  room, 20 open claims, ms", "", "%.2f", get("open20", "room"), nil},
		{"claim, 1,619 open claims / 20", fmt.Sprintf("≤ %.2g", barClaimOpen), "%.2f", ratio("open1619", "claim", "open20", "claim"), le(barClaimOpen)},
		{"  claim, 1,619 open claims, ms", "", "%.2f", get("open1619", "claim"), nil},
		{"  claim, 20 open claims, ms", "", "%.2f", get("open20", "claim"), nil},
		{"log --json -n 10, ms", fmt.Sprintf("≤ %.0f", barLogMs), "%.1f", get("plain", "log"), le(barLogMs)},
		{"log --json -n 10, max RSS MiB", fmt.Sprintf("≤ %.0f", barLogRSS), "%.1f", get("plain", "log.rss"), le(barLogRSS)},
		{"room --json, cache deleted, s", fmt.Sprintf("≤ %.1f", barColdMs/1000), "%.3f", seconds(get("plain", "cold")), le(barColdMs / 1000)},
		{"room --json, cache deleted, max RSS MiB", fmt.Sprintf("≤ %.0f", barColdRSS), "%.1f", get("plain", "cold.rss"), le(barColdRSS)},
		{"8 writers x 200 appends, appends/s", fmt.Sprintf("≥ %.0f", barWritersRate), "%.1f", get("writers", "writers.rate"), ge(barWritersRate)},
		{"8 writers x 200 appends, p99 ms", fmt.Sprintf("≤ %.0f", barWritersP99), "%.1f", get("writers", "writers.p99"), le(barWritersP99)},
		{"  p50 ms", "", "%.1f", get("writers", "writers.p50"), nil},
		{"  CPU (user+system) ms per append process", "", "%.2f", get("writers", "writers.cpu"), nil},
		{"  every acknowledged fact in the ledger, git fsck", "ok", "ok", get("writers", "writers.fsck"), func(v float64) bool { return v == 1 }},
	}
	sizes := []string{"1k", "10k", "100k"}
	fmt.Println("## Issue 14: the table (medians; ratios are medians of the per-round ratios)")
	fmt.Printf("%-50s", "figure")
	for _, z := range sizes {
		fmt.Printf(" %9s", z)
	}
	fmt.Printf("  %-7s %s\n", "bar", "verdict")
	fmt.Println(strings.Repeat("-", 50+10*len(sizes)+18))
	pass, fail := 0, 0
	for _, row := range rows {
		fmt.Printf("%-50s", row.figure)
		verdict, any := "PASS", false
		for _, z := range sizes {
			v, ok := row.value(z)
			if !ok {
				fmt.Printf(" %9s", "-")
				continue
			}
			any = true
			cell := row.format
			if strings.Contains(cell, "%") {
				cell = fmt.Sprintf(row.format, v)
			}
			if row.ok != nil && !row.ok(v) {
				verdict, cell = "FAIL", cell+"*"
			}
			fmt.Printf(" %9s", cell)
		}
		switch {
		case row.ok == nil:
			verdict = ""
		case !any:
			verdict = "not measured"
		case verdict == "PASS":
			pass++
		default:
			fail++
		}
		fmt.Printf("  %-7s %s\n", row.bar, verdict)
	}
	fmt.Printf("\n%d bars pass, %d fail (* marks a value that misses its bar)\n", pass, fail)
}

func seconds(f func(string) (float64, bool)) func(string) (float64, bool) {
	return func(z string) (float64, bool) {
		v, ok := f(z)
		return v / 1000, ok
	}
}
