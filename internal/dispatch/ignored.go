package dispatch

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/broodhq/brood/internal/gitx"
)

// A writer can hide a file it makes from git status by ignoring it: a new
// d/.gitignore holding `*` ignores itself and every file beside it (review
// commithide P1-1). The state of a tree therefore holds its ignored paths
// too, as git lists them with --directory (a directory ignored as a whole
// is one entry, "build/"; a file ignored in a directory that is not, one
// entry each), each fingerprinted by its inode's metadata (lstat: size,
// times, inode, type; the content of ignored files, a build's output, is
// not read). Comparing the states names every ignored file made, changed
// or deleted where git lists ignored files one by one, and every ignored
// directory made or deleted whole; the files a directory made during the
// run holds are named by a walk of it (NewIgnoredFiles). A file changed
// inside a directory ignored as a whole before the writer (build/,
// node_modules/) is not compared: that is the bound, said in
// docs/lifecycle.md.

// maxIgnored bounds the ignored paths one state fingerprints; those past
// it are counted in TreeState.IgnoredCut.
const maxIgnored = maxWalk

// maxNewIgnored bounds the files named inside the ignored directories a
// run made, maxNewIgnoredDir inside one of them: past it the directory
// itself is named ("node_modules/"), not a thousand of its files.
const (
	maxNewIgnored    = 200
	maxNewIgnoredDir = 20
)

// ignoredDir is the fingerprint of a directory git lists as ignored whole.
const ignoredDir = "ignored-dir"

// listIgnored lists the ignored paths of the repository whose top level
// is top, directories ignored whole once.
func listIgnored(ctx context.Context, top string) ([]byte, error) {
	return gitOutput(ctx, top, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
}

// addIgnored fingerprints the ignored paths of ls (listIgnored's output)
// into st.Files, at most maxIgnored of them.
func addIgnored(st *TreeState, ls []byte) {
	n := 0
	for _, p := range strings.Split(string(ls), "\x00") {
		if p == "" || p == ".brood/" || strings.HasPrefix(p, ".brood/") {
			continue
		}
		if _, listed := st.Files[p]; listed {
			continue
		}
		if n >= maxIgnored {
			st.IgnoredCut++
			continue
		}
		n++
		if strings.HasSuffix(p, "/") {
			st.Files[p] = ignoredDir
			continue
		}
		st.Files[p] = "ignored:" + statPrint(filepath.Join(st.Root, p))
	}
}

// statPrint fingerprints the entry at p by its metadata, never following
// a link: a write changes its size, its modification or its change time.
func statPrint(p string) string {
	var s syscall.Stat_t
	if err := syscall.Lstat(p, &s); err != nil {
		return "absent"
	}
	return fmt.Sprintf("%o:%d:%d:%d.%d:%d.%d", s.Mode, s.Ino, s.Size, s.Mtim.Sec, s.Mtim.Nsec, s.Ctim.Sec, s.Ctim.Nsec)
}

// expandNewIgnored replaces in changed each ignored directory b holds and
// a did not (made during the run, or newly ignored whole) by the files
// below it, when there are at most maxNewIgnoredDir of them (and
// maxNewIgnored in all); else the directory is named as itself ("d/").
func expandNewIgnored(a, b *TreeState, changed []string) []string {
	budget := maxNewIgnored
	out := make([]string, 0, len(changed))
	for _, p := range changed {
		_, had := a.Files[p]
		if b.Files[p] != ignoredDir || had {
			out = append(out, p)
			continue
		}
		limit := min(budget, maxNewIgnoredDir)
		files, whole := walkFiles(b.Root, strings.TrimSuffix(p, "/"), &limit)
		if !whole {
			out = append(out, p)
			continue
		}
		budget -= len(files)
		out = append(out, files...)
	}
	return out
}

// walkFiles lists the entries that are not directories below dir
// (relative to root, slash-separated), never following a link, taking
// from *budget; whole is false when the budget or an unreadable directory
// cut the list.
func walkFiles(root, dir string, budget *int) (files []string, whole bool) {
	whole = true
	_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			whole = false
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if *budget <= 0 {
			whole = false
			return filepath.SkipAll
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			whole = false
			return nil
		}
		*budget--
		files = append(files, path.Clean(filepath.ToSlash(rel)))
		return nil
	})
	// An empty directory made is named as itself.
	return files, whole && len(files) > 0
}

// IgnoredBound says where the walks' account of ignored files was cut
// (TreeState.IgnoredCut, IgnoredUnlisted), for a note: "" when it was
// not.
func IgnoredBound(before, after *TreeState) string {
	switch {
	case before.IgnoredUnlisted || after.IgnoredUnlisted:
		return "git could not list the tree's ignored files: Files changed names no ignored file"
	case before.IgnoredCut > 0 || after.IgnoredCut > 0:
		return fmt.Sprintf("the tree has more ignored paths than brood compares: %d were not compared, so Files changed may miss ignored files", max(before.IgnoredCut, after.IgnoredCut))
	}
	return ""
}

// SplitIgnored splits changed (Changed's, between a and b) into the
// paths the base's rules ignore and the others, judged by the state
// before the run only (a, whose listing the base's rules made): a path
// the child's own new ignore rules ignore is its change (reportfix P2).
// A path is ignored when a listed it as ignored, or when it is below a
// directory the base's rules ignore by its own name (IgnoredWhole; not a
// directory git listed whole only because each of its files matched, as
// config/ under *.env). No path below a .gitignore that changed during
// the run is set aside. A path new to the tree (a build's new build/) is
// asked of git's rules now (check-ignore) only when none of the ignore
// files it reads changed: the rules are then the base's.
func SplitIgnored(ctx context.Context, a, b *TreeState, changed []string) (ignored, others []string) {
	var ruled []string // the directories whose .gitignore changed
	for _, p := range changed {
		if path.Base(p) == ".gitignore" {
			ruled = append(ruled, path.Dir(p))
		}
	}
	aside := map[string]bool{}
	var ask []string
	for _, p := range changed {
		switch {
		case underAny(p, ruled):
		case baseIgnores(a, p):
			aside[p] = true
		case !listedAbove(a, p) && a.ExcludePrint == b.ExcludePrint:
			ask = append(ask, p)
		}
	}
	for _, p := range checkIgnore(ctx, b.Root, ask) {
		aside[p] = true
	}
	for _, p := range changed {
		if aside[p] {
			ignored = append(ignored, p)
		} else {
			others = append(others, p)
		}
	}
	return ignored, others
}

// listedAbove reports whether st lists p or a directory above it.
func listedAbove(st *TreeState, p string) bool {
	if _, ok := st.Files[p]; ok {
		return true
	}
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, ok := st.Files[dir+"/"]; ok {
			return true
		}
	}
	return false
}

// checkIgnore returns those of paths (relative to top) git's rules
// ignore, as check-ignore says; none when it cannot say.
func checkIgnore(ctx context.Context, top string, paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	in := strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	// check-ignore refuses literal pathspecs (gitx's default); its paths
	// are matched as names, not as patterns, either way.
	env := []string{"GIT_LITERAL_PATHSPECS=0"}
	out, _ := gitx.Cmd{Dir: top, NoFilters: true, Stdin: in, Env: env}.Run(ctx, "check-ignore", "--no-index", "-z", "--stdin")
	var got []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			got = append(got, p)
		}
	}
	return got
}

// underAny reports whether p is below one of dirs ("." is the top).
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == "." || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

func baseIgnores(st *TreeState, p string) bool {
	if st == nil {
		return false
	}
	if f, ok := st.Files[p]; ok {
		return f == ignoredDir || strings.HasPrefix(f, "ignored:")
	}
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if st.Files[dir+"/"] == ignoredDir && slices.Contains(st.IgnoredWhole, dir+"/") {
			return true
		}
	}
	return false
}

// ignoredWhole are those of the directories ls (listIgnored's output)
// lists whole that the rules ignore by their own name (git check-ignore):
// git also lists whole a directory each of whose files is ignored.
func ignoredWhole(ctx context.Context, top string, ls []byte) []string {
	var dirs []string
	for _, p := range strings.Split(string(ls), "\x00") {
		if strings.HasSuffix(p, "/") && p != ".brood/" && !strings.HasPrefix(p, ".brood/") {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	return checkIgnore(ctx, top, dirs)
}
