package spawn

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
)

// The index's bits (C8 of review 15): assume-unchanged and skip-worktree
// (`git update-index`) make git — the user's status, diff and commit -a,
// and brood's own walk for the Files changed line — take a tracked file
// for unchanged whatever is on disk. .git/index stays writable to an
// in-place writer (its commits write it), so it could change build.sh and
// set a bit on it: nothing would say so. The guard records which entries
// carry a bit before the spawn and, once the child exited and before the
// parent's own after-walk, clears every bit the child set, and names the
// files on the Configuration line. Bits the user set are the user's, and
// stay: the guard stamps those entries' files before the spawn and names
// any the child changed on Files changed and the Configuration line
// (review 18's R1), since neither git nor the after-walk would.

// Index bit names, as git update-index spells them less the "--".
const (
	bitAssume = "assume-unchanged"
	bitSkip   = "skip-worktree"
)

// indexBits reads, for the work tree at top, which index entries carry
// which bits (`git ls-files -v`: a lower-case tag is assume-unchanged,
// S or s skip-worktree).
func indexBits(ctx context.Context, top string) (map[string][]string, error) {
	out, err := gitx.Run(ctx, top, "ls-files", "-z", "-v")
	if err != nil {
		return nil, err
	}
	bits := map[string][]string{}
	for rec := range strings.SplitSeq(out, "\x00") {
		if len(rec) < 3 || rec[1] != ' ' {
			continue
		}
		tag, path := rec[0], rec[2:]
		if tag == 'S' || tag == 's' {
			bits[path] = append(bits[path], bitSkip)
		}
		if tag >= 'a' && tag <= 'z' {
			bits[path] = append(bits[path], bitAssume)
		}
	}
	return bits, nil
}

// watchIndex records the index's bits before the spawn (the guard watches
// a repository: g.git).
func (g *configGuard) watchIndex(ctx context.Context) {
	if g.git == nil {
		return
	}
	if _, gitDir, _, err := gitx.Dirs(g.git.Root()); err == nil {
		g.index = filepath.Join(gitDir, "index")
		g.indexWas, g.indexSeen = indexStamp(g.index)
	}
	g.bits, g.bitsErr = indexBits(ctx, g.git.Root())
	g.userStamps = map[string]string{}
	for path := range g.bits {
		g.userStamps[path] = fileStamp(filepath.Join(g.git.Root(), filepath.FromSlash(path)))
	}
}

// fileStamp is a file's identity, size and times (indexStamp), or
// "absent": a sparse checkout's skip-worktree entries have no file.
func fileStamp(path string) string {
	if st, ok := indexStamp(path); ok {
		return st
	}
	if _, err := os.Lstat(path); err != nil {
		return "absent"
	}
	return ""
}

// userBitsChanged finds the files under a bit the user set before the
// spawn whose stamp moved during the run: git and the after-walk take
// them for unchanged. The bits stay; the files are named.
func (g *configGuard) userBitsChanged() {
	var named []string
	for path, was := range g.userStamps {
		if fileStamp(filepath.Join(g.git.Root(), filepath.FromSlash(path))) == was {
			continue
		}
		g.userChanged = append(g.userChanged, path)
		named = append(named, path+" ("+strings.Join(g.bits[path], ", ")+")")
	}
	if len(named) == 0 {
		return
	}
	slices.Sort(g.userChanged)
	slices.Sort(named)
	g.userLine = "changed by the subagent under your own git index bit: " + strings.Join(named, ", ") +
		" — git status and git diff will not show it; run `git update-index --no-skip-worktree --no-assume-unchanged FILE` to review it"
}

// withUserBitsChanged adds to a Files changed list the files the child
// changed under the user's own index bits (userBitsChanged).
func (g *configGuard) withUserBitsChanged(changed []string) []string {
	if g == nil || len(g.userChanged) == 0 {
		return changed
	}
	out := slices.Clone(changed)
	for _, p := range g.userChanged {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// clearIndexBits clears, after the child exited, every index bit it set
// since watchIndex, and keeps the line that names them for settle. Call
// it before the after-walk whose Files changed it makes true.
func (g *configGuard) clearIndexBits(ctx context.Context) {
	if g == nil || g.git == nil || g.bits == nil || g.bitsDone {
		return
	}
	g.bitsDone = true
	g.userBitsChanged()
	if now, ok := indexStamp(g.index); ok && g.indexSeen && now == g.indexWas {
		return // the index was not written (ls-files -v: 8 ms of CPU at 40,000 files)
	}
	now, err := indexBits(ctx, g.git.Root())
	if err != nil {
		g.bitsLine = "git index bits not checked after the run (" + err.Error() + "): run `git ls-files -v | grep -v '^H'` and clear any assume-unchanged or skip-worktree bit you did not set"
		return
	}
	set := map[string][]string{} // bit -> paths the child set it on
	for path, bits := range now {
		for _, b := range bits {
			if !slices.Contains(g.bits[path], b) {
				set[b] = append(set[b], path)
			}
		}
	}
	var named, failed []string
	for _, b := range []string{bitAssume, bitSkip} {
		paths := set[b]
		if len(paths) == 0 {
			continue
		}
		slices.Sort(paths)
		for _, p := range paths {
			named = append(named, p+" ("+b+")")
		}
		cmd := gitx.Cmd{Dir: g.git.Root(), Stdin: strings.NewReader(strings.Join(paths, "\x00") + "\x00")}
		if _, err := cmd.Run(ctx, "update-index", "--no-"+b, "-z", "--stdin"); err != nil {
			failed = append(failed, b+": "+err.Error())
		}
	}
	if len(named) == 0 {
		return
	}
	g.bitsLine = "git index bits set by the subagent and cleared: " + strings.Join(named, ", ") +
		" — with them your git status, git diff and git commit -a (and brood's Files changed) take the files for unchanged whatever is on disk; review those files"
	if len(failed) > 0 {
		g.bitsLine += ". NOT cleared (clear them yourself with git update-index): " + strings.Join(failed, "; ")
	}
}

// indexLines is settle's part for the index's bits.
func (g *configGuard) indexLines() []string {
	switch {
	case g.bitsErr != nil:
		return []string{"git index bits not recorded before the run (" + g.bitsErr.Error() + "): run `git ls-files -v | grep -v '^H'` and clear any assume-unchanged or skip-worktree bit you did not set"}
	}
	var lines []string
	for _, l := range []string{g.bitsLine, g.userLine} {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
