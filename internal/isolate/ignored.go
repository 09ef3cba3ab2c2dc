package isolate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// hideIgnored keeps the parent's gitignored files (.env, node_modules,
// build outputs) out of an overlay child's view: each untracked ignored
// entry the spawn snapshot's status listed, with wholly ignored directories
// as one entry, gets a whiteout in the upper layer before the child mounts
// it, so the child sees the tree as a fresh checkout of the spawn snapshot
// would have it. The cost is one mknod per entry (a node_modules of 100,000
// files is one whiteout); the listing came with the snapshot's walk.
// Ignored files the index tracks stay, as git keeps them.
//
// A directory the child must reach (keep: its own state directory, the
// dispatch records of its subagents) is never hidden: when an ignored
// directory holds one, its other entries are hidden one by one instead.
func (w *Workspace) hideIgnored(keep, ignored []string) (int, error) {
	for i, k := range keep {
		if r, err := filepath.EvalSymlinks(k); err == nil {
			keep[i] = r
		}
	}
	var made []string
	defer func() { w.fixUpperDirs(made) }()
	hide := func(rel string) error {
		if err := w.upperDirs(filepath.Dir(rel), &made); err != nil {
			return err
		}
		err := unix.Mknod(filepath.Join(w.upper, rel), unix.S_IFCHR|0o000, 0)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("isolate: hide ignored %s: %w", rel, err)
		}
		return nil
	}
	n := 0
	for _, p := range ignored {
		k, err := w.whiteout(filepath.FromSlash(p), keep, hide)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// listHidden is hideIgnored for a worktree copy: the same entries, as
// absolute paths in the real tree, for the child's sandbox to refuse
// reading (sandbox.Policy.Hidden), since the real tree is still there
// beside the copy.
func (w *Workspace) listHidden(keep, ignored []string) []string {
	for i, k := range keep {
		if r, err := filepath.EvalSymlinks(k); err == nil {
			keep[i] = r
		}
	}
	var out []string
	hide := func(rel string) error {
		out = append(out, filepath.Join(w.repo.top, rel))
		return nil
	}
	for _, p := range ignored {
		_, _ = w.whiteout(filepath.FromSlash(p), keep, hide)
	}
	return out
}

// whiteout hides rel (repository-relative, with hide) unless a kept directory is rel
// or lies beneath it; in the latter case it hides rel's other entries.
// brood's own directory (Options.BroodDir: the agents, settings and model
// scripts a child's brood reads) stays, but for the parent's records and
// sessions in it.
func (w *Workspace) whiteout(rel string, keep []string, hide func(rel string) error) (int, error) {
	abs := filepath.Join(w.repo.top, rel)
	holds := false
	for _, k := range keep {
		if k == abs {
			return 0, nil
		}
		if within(abs, k) {
			holds = true
		}
	}
	if b := w.broodDir; b != "" && !holds {
		switch {
		case within(abs, b):
			holds = true // .brood or an ancestor: look inside
		case within(b, abs):
			r, _ := filepath.Rel(b, abs)
			first, _, _ := strings.Cut(r, string(filepath.Separator))
			if first != "records" && first != "sessions" {
				return 0, nil
			}
		}
	}
	if !holds {
		if err := hide(rel); err != nil {
			return 0, err
		}
		return 1, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return 0, nil // gone meanwhile: nothing to hide
	}
	n := 0
	for _, e := range entries {
		k, err := w.whiteout(filepath.Join(rel, e.Name()), keep, hide)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// upperDirs creates rel's directories in the upper layer (private until
// fixUpperDirs gives them the tree's own mode and owner).
func (w *Workspace) upperDirs(rel string, made *[]string) error {
	if rel == "." || rel == "" {
		return nil
	}
	up := filepath.Join(w.upper, rel)
	if _, err := os.Lstat(up); err == nil {
		return nil
	}
	if err := w.upperDirs(filepath.Dir(rel), made); err != nil {
		return err
	}
	if err := os.Mkdir(up, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("isolate: hide ignored files: %w", err)
	}
	*made = append(*made, rel)
	return nil
}

// fixUpperDirs gives the directories upperDirs made the mode, owner and
// times of the tree's own, deepest first, so the merged view shows them
// unchanged (an upper directory's attributes win over the lower one's).
func (w *Workspace) fixUpperDirs(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(w.repo.top, made[i]), &st) != nil {
			continue
		}
		up := filepath.Join(w.upper, made[i])
		_ = unix.Lchown(up, int(st.Uid), int(st.Gid)) // as non-root: the same user anyway
		_ = unix.Chmod(up, st.Mode&0o7777)
		_ = unix.UtimesNanoAt(unix.AT_FDCWD, up, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
	}
}
