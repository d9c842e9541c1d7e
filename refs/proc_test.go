package refs

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A process that has exited but is not reaped yet (a zombie) holds no
// lock: a lock note naming it is stale. (It counted as alive, so a stop
// that ended a hook mid-append waited out the lock timeout and failed:
// TestLifecyclePlanRun in CI.)
func TestZombieIsNotAlive(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	// Wait for the exit, not for a time: until /proc says Z.
	for i := 0; ; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			break
		}
		if i == 100000 {
			t.Fatal("the child never exited")
		}
		time.Sleep(time.Millisecond)
	}
	id := processID(pid)
	if id.start == "-" {
		t.Fatal("no start time for the zombie")
	}
	if processAlive(pid, id.start, id.boot) {
		t.Error("a zombie counts as alive")
	}
	me := processID(os.Getpid())
	if !processAlive(os.Getpid(), me.start, me.boot) {
		t.Error("this process counts as gone")
	}
}
