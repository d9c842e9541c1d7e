// Package refs is the only package that talks to git storage. It owns the
// object store (blobs, trees and commits, read with go-git's pack and
// loose-object readers from the repository's common dir), the ledger ref updated with git's own lockfile
// protocol behind a private flock queue, and every call to the git command
// line (worktree add, merge-tree, fetch, push). Nothing outside this package
// imports go-git.
package refs
