package refs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Config is git's configuration as git would read it for a repository,
// read in-process (a `git config` per command would cost an append more
// than the append itself): system, global, the repository's config and,
// with extensions.worktreeConfig, the worktree's, then `git -c` and
// GIT_CONFIG_COUNT. A file that includes another (include or includeIf)
// is read by git itself, once: `git config -z --list --includes` gives
// every value in git's order with every condition (gitdir:, gitdir/i:,
// onbranch:, hasconfig:remote.*.url:) decided as git decides it, which
// an in-process reader could only imitate (an include's values come
// where the include stands, between the sections around it).
type Config struct {
	vals     map[string][]string // "section.key" or "section.sub.key", section and key lowercased; noValue for a bare key
	includes bool                // a file read holds include or includeIf
	byGit    bool                // vals are git's own listing
}

// ReadConfig reads the configuration of the repository with the given
// common dir and (for a linked worktree) git dir; gitDir may be "".
func ReadConfig(commonDir, gitDir string) *Config {
	return ReadConfigWith(commonDir, gitDir, nil)
}

// ReadConfigWith is ReadConfig with the repository's config file already
// read (local; nil reads it).
func ReadConfigWith(commonDir, gitDir string, local []byte) *Config {
	Opens.Config.Add(1)
	c := readInProcess(commonDir, gitDir, local)
	if c.includes || strings.Contains(os.Getenv("GIT_CONFIG_PARAMETERS"), "include") {
		dir := gitDir
		if dir == "" {
			dir = commonDir
		}
		if vals, err := gitConfigList(dir); err == nil {
			c.vals, c.byGit = vals, true
		}
	}
	return c
}

// gitConfigList is git's own reading of the configuration of the
// repository at gitDir.
func gitConfigList(gitDir string) (map[string][]string, error) {
	out, err := Git(gitDir, nil, "--git-dir="+gitDir, "config", "-z", "--list", "--includes")
	if err != nil {
		return nil, err
	}
	vals := map[string][]string{}
	for _, e := range strings.Split(out, "\x00") {
		if e == "" {
			continue
		}
		k, v, ok := strings.Cut(e, "\n")
		if !ok {
			v = noValue // a key with no "=": true for a boolean
		}
		k = normKey(k)
		vals[k] = append(vals[k], v)
	}
	return vals, nil
}

// readInProcess reads the configuration files without git; includes
// says whether one of them includes another.
func readInProcess(commonDir, gitDir string, local []byte) *Config {
	c := &Config{vals: map[string][]string{}}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		// Set but empty names no file, as for git.
		sys, ok := os.LookupEnv("GIT_CONFIG_SYSTEM")
		if !ok {
			sys = "/etc/gitconfig"
		}
		if sys != "" {
			c.readFile(sys, 0)
		}
	}
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		if g != "" {
			c.readFile(g, 0)
		}
	} else {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		home, _ := os.UserHomeDir()
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			c.readFile(filepath.Join(xdg, "git", "config"), 0)
		}
		if home != "" {
			c.readFile(filepath.Join(home, ".gitconfig"), 0)
		}
	}
	if local != nil {
		c.readData(filepath.Join(commonDir, "config"), local, 0)
	} else {
		Opens.ConfigFile.Add(1)
		c.readFile(filepath.Join(commonDir, "config"), 0)
	}
	if gitDir != "" && c.Bool("extensions.worktreeconfig") {
		c.readFile(filepath.Join(gitDir, "config.worktree"), 0)
	}
	c.readParameters(os.Getenv("GIT_CONFIG_PARAMETERS"))
	if n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := 0; i < n; i++ {
			k := os.Getenv("GIT_CONFIG_KEY_" + strconv.Itoa(i))
			c.set(k, os.Getenv("GIT_CONFIG_VALUE_"+strconv.Itoa(i)))
		}
	}
	return c
}

// Get returns the last value of key ("section.key", "section.sub.key").
func (c *Config) Get(key string) string {
	vs := c.vals[normKey(key)]
	if len(vs) == 0 || vs[len(vs)-1] == noValue {
		return ""
	}
	return vs[len(vs)-1]
}

// Conditional reports whether an includeIf section was read in-process
// (git could not be asked): the files it names may set any key.
func (c *Config) Conditional() bool {
	if c.byGit {
		return false
	}
	for k := range c.vals {
		if strings.HasPrefix(k, "includeif.") {
			return true
		}
	}
	return false
}

// Bool reads key as git reads a boolean; unset is false, and so is an
// empty value ("sign ="), but a bare key ("sign") is true.
func (c *Config) Bool(key string) bool {
	vs, ok := c.vals[normKey(key)]
	if !ok || len(vs) == 0 {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(vs[len(vs)-1])) {
	case noValue, "true", "yes", "on", "1":
		return true
	}
	return false
}

// Path reads key as a path: ~/ is the home directory; a relative path is
// left as it is (git resolves it against the current directory).
func (c *Config) Path(key string) string { return ExpandHome(c.Get(key)) }

func normKey(k string) string {
	first := strings.IndexByte(k, '.')
	last := strings.LastIndexByte(k, '.')
	if first < 0 {
		return strings.ToLower(k)
	}
	return strings.ToLower(k[:first]) + k[first:last] + strings.ToLower(k[last:])
}

func (c *Config) set(key, val string) {
	if key == "" {
		return
	}
	k := normKey(key)
	c.vals[k] = append(c.vals[k], val)
}

func (c *Config) readFile(path string, depth int) {
	b, err := os.ReadFile(path)
	if err != nil || depth > 10 {
		return
	}
	c.readData(path, b, depth)
}

// readData reads the config file at path whose bytes are b; an include
// is read where it stands.
func (c *Config) readData(path string, b []byte, depth int) {
	entries, err := parseConfig(b)
	if err != nil {
		return // git would refuse the file; rally reads on without it
	}
	for _, e := range entries {
		if configKeyHas(e.key, "include") || configKeyHas(e.key, "includeif") {
			c.includes = true
		}
		c.set(e.key, e.val)
		if e.key == "include.path" && e.val != noValue {
			inc := ExpandHome(e.val)
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			c.readFile(inc, depth+1)
		}
	}
}

// readParameters reads GIT_CONFIG_PARAMETERS, which git sets for `git -c
// k=v rally ...`: shell-quoted 'k=v' or 'k'='v' items.
func (c *Config) readParameters(s string) {
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		k, rest, ok := sqDequote(s)
		if !ok {
			return
		}
		if strings.HasPrefix(rest, "=") {
			v, r2, ok := sqDequote(rest[1:])
			if !ok {
				return
			}
			c.set(k, v)
			s = r2
			continue
		}
		key, val, _ := strings.Cut(k, "=")
		c.set(key, val)
		s = rest
	}
}

// sqDequote reads one 'quoted' word (with git's '\” escapes) from s.
func sqDequote(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "'") {
		return "", "", false
	}
	var out strings.Builder
	for strings.HasPrefix(s, "'") {
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", "", false
		}
		out.WriteString(s[1 : 1+end])
		s = s[2+end:]
		if strings.HasPrefix(s, `\'`) {
			out.WriteByte('\'')
			s = s[2:]
			continue
		}
		break
	}
	return out.String(), s, true
}

// GetAll returns every value of a multi-valued key, in the order git
// reads them (a bare key is left out).
func (c *Config) GetAll(key string) []string {
	var out []string
	for _, v := range c.vals[normKey(key)] {
		if v != noValue {
			out = append(out, v)
		}
	}
	return out
}
