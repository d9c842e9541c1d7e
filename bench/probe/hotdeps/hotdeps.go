// Package hotdeps is a start-up probe: linked into git-rally with the
// build tag rallyprobe (cmd/git-rally/probe.go), it imports what a claim's
// packages (facts, refs, worktree, hooks) import, less cobra and
// x/crypto/ssh, and its init exits when asked to. Go initialises a package
// after its imports and otherwise in import-path order, so this is the
// earliest a hot command could start if it ran without cobra (whose
// text/template sorts after nearly every other package) and without ssh.
//
// The imports are those of
//
//	go list -f '{{join .Imports "\n"}}' ./facts ./refs ./worktree ./hooks
//
// less this module's packages and golang.org/x/crypto/ssh..., plus gjson
// (the hook command's reader).
package hotdeps

import (
	_ "bufio"
	_ "bytes"
	_ "context"
	_ "crypto/ed25519"
	_ "crypto/sha256"
	_ "encoding/binary"
	_ "encoding/hex"
	_ "encoding/json"
	_ "errors"
	_ "fmt"
	_ "hash/adler32"
	_ "hash/crc32"
	_ "hash/maphash"
	_ "io"
	_ "io/fs"
	_ "math"
	_ "math/bits"
	_ "math/rand/v2"
	_ "net"
	"os"
	_ "os/exec"
	_ "path"
	_ "path/filepath"
	_ "reflect"
	_ "regexp"
	_ "runtime"
	_ "runtime/debug"
	_ "slices"
	_ "sort"
	_ "strconv"
	_ "strings"
	_ "sync"
	_ "sync/atomic"
	_ "syscall"
	_ "time"
	_ "unicode"
	_ "unicode/utf8"

	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/go-git/go-git/v5/plumbing"
	_ "github.com/go-git/go-git/v5/plumbing/cache"
	_ "github.com/go-git/go-git/v5/plumbing/format/config"
	_ "github.com/go-git/go-git/v5/plumbing/format/idxfile"
	_ "github.com/go-git/go-git/v5/plumbing/format/objfile"
	_ "github.com/go-git/go-git/v5/plumbing/format/packfile"
	_ "github.com/tidwall/gjson"
)

func init() {
	if len(os.Args) == 2 && os.Args[1] == "__probe-hotdeps" {
		os.Stdout.WriteString("hotdeps\n")
		os.Exit(0)
	}
}
