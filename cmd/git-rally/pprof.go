//go:build rallypprof

package main

// With the build tag rallypprof, git-rally profiles itself as a whole
// process (bench/README.md, "Finding out why"):
//
//	RALLY_CPUPROFILE=cpu.out  the CPU profile of the command
//	RALLY_MEMPROFILE=mem.out  every allocation (sampled each 4 KiB) and the heap at exit
//	RALLY_HWM=1               git-rally's own peak RSS (VmHWM), its children's not counted, on stderr
//
// Only the environment is read; a build without the tag has neither.
import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
)

func init() {
	var stops []func()
	if p := os.Getenv("RALLY_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "git-rally: profile: %v\n", err)
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if p := os.Getenv("RALLY_MEMPROFILE"); p != "" {
		runtime.MemProfileRate = 4096
		stops = append(stops, func() {
			f, err := os.Create(p)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "git-rally: profile: %v\n", err)
			}
		})
	}
	if os.Getenv("RALLY_HWM") != "" {
		stops = append(stops, func() {
			b, _ := os.ReadFile("/proc/self/status")
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "VmHWM:") {
					fmt.Fprintf(os.Stderr, "git-rally: %s\n", l)
				}
			}
		})
	}
	atExit = func() {
		for _, stop := range stops {
			stop()
		}
	}
}
