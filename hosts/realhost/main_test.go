package realhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The suite runs in two processes. The outer one (a plain `go test`)
// installs the pinned hosts from npm into a cache outside the repository
// and builds git-rally, then runs this test binary again inside a new
// network namespace (`unshare -n`) with only loopback up, so neither the
// hosts nor anything they start can reach past this machine. The inner one
// starts the scripted model server on 127.0.0.1 and runs the hosts.
const innerEnv = "RALLY_REALHOST_INNER"

// Set by the outer process for the inner one.
var (
	hostsDir string // node_modules of the installed hosts
	binDir   string // holds git-rally
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("SKIP realhost: -short (the real-host suite installs and runs Claude Code, Codex and Gemini CLI)")
		os.Exit(0)
	}
	if os.Getenv(innerEnv) == "1" {
		hostsDir, binDir = os.Getenv("RALLY_REALHOST_HOSTS"), os.Getenv("RALLY_REALHOST_BIN")
		os.Exit(m.Run())
	}
	os.Exit(outer())
}

func outer() int {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		fmt.Printf("SKIP realhost: the pinned host binaries are linux/amd64 (this is %s/%s)\n", runtime.GOOS, runtime.GOARCH)
		return 0
	}
	for _, prog := range []string{"npm", "node", "unshare", "ip", "git"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("CI") == "true" {
				fmt.Printf("FAIL realhost: %s is not installed (.ci/run installs it)\n", prog)
				return 1
			}
			fmt.Printf("SKIP realhost: %s is not installed\n", prog)
			return 0
		}
	}
	trackSources()
	nm, skip, err := installHosts()
	if skip != "" {
		if os.Getenv("CI") == "true" {
			// CI must run the suite: a registry it cannot reach fails it.
			fmt.Println("FAIL realhost: " + skip)
			return 1
		}
		fmt.Println("SKIP realhost: " + skip)
		return 0
	}
	if err != nil {
		fmt.Println("FAIL realhost: " + err.Error())
		return 1
	}
	bin, err := os.MkdirTemp("", "realhost-bin-")
	if err != nil {
		fmt.Println("FAIL realhost: " + err.Error())
		return 1
	}
	defer os.RemoveAll(bin)
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator),
		"github.com/git-rally/git-rally/cmd/git-rally", "github.com/git-rally/git-rally/cmd/git-rally-server")
	if other := os.Getenv("RALLY_REALHOST_GIT_RALLY"); other != "" {
		// another build of git-rally (an older one, to see the suite fail)
		build = exec.Command("cp", other, filepath.Join(bin, "git-rally"))
	}
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Println("FAIL realhost: building git-rally: " + err.Error())
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Println("FAIL realhost: " + err.Error())
		return 1
	}
	// unshare -n needs root (CI runs as root) or user namespaces.
	args := []string{"-n"}
	if os.Geteuid() != 0 {
		args = []string{"-r", "-n"}
	}
	args = append(args, "--", "sh", "-c", `ip link set lo up && exec "$@"`, "sh", self)
	args = append(args, os.Args[1:]...)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), innerEnv+"=1", "RALLY_REALHOST_HOSTS="+nm, "RALLY_REALHOST_BIN="+bin)
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Println("FAIL realhost: running inside unshare -n: " + err.Error())
		return 1
	}
	return 0
}

// installHosts makes sure the hosts pinned in npm/package-lock.json are in
// the cache and returns their node_modules. skip says why the suite cannot
// run (the registry cannot be reached).
func installHosts() (nm, skip string, err error) {
	lock, err := os.ReadFile(filepath.Join("npm", "package-lock.json"))
	if err != nil {
		return "", "", err
	}
	pkg, err := os.ReadFile(filepath.Join("npm", "package.json"))
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", err
		}
		base = filepath.Join(home, ".cache")
	}
	dir := filepath.Join(base, "git-rally", "realhost", hex.EncodeToString(sum[:8]))
	nm = filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "installed")); err == nil {
		return nm, "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", "", err
		}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// --ignore-scripts: Claude Code's postinstall downloads; its native
	// binary comes in the platform package anyway.
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		text := out.String()
		for _, sign := range []string{"ENOTFOUND", "ECONNREFUSED", "ETIMEDOUT", "EAI_AGAIN", "ECONNRESET", "ENETUNREACH", "network", "proxy"} {
			if strings.Contains(text, sign) || ctx.Err() != nil {
				return "", fmt.Sprintf("npm cannot reach its registry: %s", lineWith(text, sign)), nil
			}
		}
		return "", "", fmt.Errorf("npm ci: %v: %s", err, text)
	}
	fmt.Printf("realhost: installed the pinned hosts in %s (%.0fs)\n", dir, time.Since(start).Seconds())
	return nm, "", os.WriteFile(filepath.Join(dir, "installed"), nil, 0o644)
}

// lineWith is the first line of s that contains sign, else its first line.
func lineWith(s, sign string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.Contains(l, sign) {
			return strings.TrimSpace(l)
		}
	}
	return lines[0]
}

// trackSources stats every Go file of the module, so go test's cache,
// which knows the files a test looked at, reruns the suite when the code
// of the git-rally it builds changes.
func trackSources() {
	filepath.WalkDir(filepath.Join("..", ".."), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata" && strings.Contains(p, "realhost")) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".txtar") || d.Name() == "go.mod" || d.Name() == "go.sum" {
			os.Stat(p)
		}
		return nil
	})
}
