package settings

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
)

// PersonalNeedsTrust decides for a person's own project file
// (.brood/settings.local.toml, .claude/settings.local.json: gitignored,
// their own answers such as "always allow"): it is honoured without trust
// only when git says it is theirs — the project is a git work tree, git
// does not track the file, and nothing the repository ships stands in its
// way. A tracked file came with the repository like any committed file and
// goes through the gate; so does every file outside a git work tree (a
// tarball, a copy, no git installed), where nothing tells the person's
// file from the one that was shipped: fail closed.
//
// git does not look through a tracked symbolic link or into a submodule,
// so a repository that commits `.claude -> cfg` with cfg/settings.local.json,
// or makes .claude or .brood a submodule holding the file, would have it
// read as untracked (review 18, X1). The file is the person's only when no
// component of rel below root is a symbolic link, it is a regular file, no
// directory on its way is a gitlink or symbolic link in the index, and it
// belongs to root's repository (not a nested one).
func PersonalNeedsTrust(ctx context.Context, root, rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	if !filepath.IsLocal(filepath.FromSlash(rel)) || !plainBelow(root, rel) {
		return true
	}
	// The repository is not trusted here: gitx runs none of its programs.
	// -s lists the file if tracked, and the entry of each directory on its
	// way that is a gitlink (160000) or a link (120000).
	ancestors := parents(rel)
	out, err := gitx.Run(ctx, root, append([]string{"ls-files", "-s", "-z", "--", rel}, ancestors...)...)
	if err != nil {
		return true // 128: not a work tree
	}
	for _, line := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if p == rel {
			return true // tracked
		}
		if mode, _, _ := strings.Cut(meta, " "); (mode == "160000" || mode == "120000") && slices.Contains(ancestors, p) {
			return true
		}
	}
	if !vouched(ctx, root) {
		return true
	}
	return otherRepository(root, rel)
}

// vouched reports whether git vouches for root as a project of its
// repository: root is the work tree's top, or the repository tracks a file
// under it. An untracked (or gitignored) directory inside someone's
// repository — an unpacked tarball, a download — is like no work tree at
// all: every file of it is untracked, so git tells nothing about who wrote
// its local files (redteam P1-5).
func vouched(ctx context.Context, root string) bool {
	top, err := gitx.Run(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	if sameDir(strings.TrimSpace(top), root) {
		return true
	}
	_, err = gitx.Run(ctx, root, "ls-files", "--error-unmatch", "--", ".")
	return err == nil
}

// sameDir reports whether a and b name the same directory, links resolved.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// plainBelow reports whether no component of rel below root is a symbolic
// link (nor anything but a directory on the way) and rel is a regular
// file. An absent file is plain: there is nothing to honour.
func plainBelow(root, rel string) bool {
	parts := strings.Split(rel, "/")
	cur := root
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if err != nil {
			return false
		}
		if i == len(parts)-1 {
			return fi.Mode().IsRegular()
		}
		if !fi.IsDir() {
			return false
		}
	}
	return true
}

// otherRepository reports whether a directory on rel's way below root
// holds a .git (a submodule's file or a nested clone's directory): the
// file is then another repository's, which git from root does not see.
func otherRepository(root, rel string) bool {
	for _, d := range parents(rel) {
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d), ".git"))
		if !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// parents are rel's directories below the root, outermost first.
func parents(rel string) []string {
	var out []string
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}
