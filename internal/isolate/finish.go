package isolate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
)

// Finish turns the child's changes into one patch against the spawn
// snapshot and applies it to the parent's tree under the repository's
// apply lock, whole or not at all, without touching the index. On conflict
// it keeps the child's copy and says where. Call it after the child has
// exited: an overlay's upper layer must not change while it is read.
func (w *Workspace) Finish(ctx context.Context) (*Outcome, error) {
	if w.Mode == ModeNone {
		return &Outcome{Note: w.Note}, nil
	}
	// The landing's git commands read the configuration's driver
	// definitions once per directory, not once each.
	ctx = gitx.WithBatch(ctx)
	base, err := w.snap.wait()
	if err != nil {
		return nil, err
	}
	// Whether the parent's tree moved beneath the child (the parent's or
	// another task's edits since the spawn snapshot) is found beside the
	// patch, in parallel: a second snapshot re-hashes only what changed.
	moved := make(chan movedResult, 1)
	go func() { moved <- w.baseMoved(ctx, base) }()
	var patch []byte
	var entries []rawEntry
	switch w.Mode {
	case ModeOverlay:
		patch, entries, err = w.overlayPatch(ctx, base)
	case ModeWorktree:
		patch, entries, err = w.worktreePatch(ctx, base)
	}
	mv := <-moved
	if err != nil {
		return nil, err
	}
	if mv.err != nil {
		return nil, mv.err
	}
	out := &Outcome{Note: w.Note, BaseMoved: mv.files, Frozen: w.Mode == ModeWorktree}
	conflict, err := w.land(ctx, base, patch, entries, out, func([]rawEntry) (func(string) string, func(), error) {
		return w.childFile, func() {}, nil
	})
	if err != nil {
		return nil, err
	}
	if conflict != "" {
		w.kept = true
		out.Conflict = conflict
		out.KeptAt = w.Root
		if w.Mode == ModeOverlay {
			out.KeptAt = w.upper
		}
	}
	return out, nil
}

// land holds back the configuration a child may not change, saves the rest
// of the patch and applies it to the work tree whole, or merges it file by
// file (theirs gives each file's new version) when git apply refuses it.
// It returns git's complaint when neither worked; out.Patch is then kept.
func (w *Workspace) land(ctx context.Context, base string, patch []byte, entries []rawEntry, out *Outcome,
	theirs func([]rawEntry) (func(string) string, func(), error)) (string, error) {
	var err error
	if patch, entries, err = w.holdConfig(patch, entries, out); err != nil {
		return "", err
	}
	for _, e := range entries {
		out.Files = append(out.Files, e.path)
	}
	if denied := w.writeDenied(entries); len(denied) > 0 {
		out.Denied = denied
		if len(patch) > 0 {
			out.Patch = filepath.Join(w.state, "changes.patch")
			if err := writeAtomic(out.Patch, patch); err != nil {
				return "", fmt.Errorf("isolate: save patch: %w", err)
			}
		}
		return "it writes " + strings.Join(denied, ", ") + ", which your Edit or Write deny rules forbid: brood never lands it (review the kept patch)", nil
	}
	if len(patch) == 0 {
		out.Applied = true
		return "", nil
	}
	out.Patch = filepath.Join(w.state, "changes.patch")
	if err := writeAtomic(out.Patch, patch); err != nil {
		return "", fmt.Errorf("isolate: save patch: %w", err)
	}
	// The check and the apply read the patch from memory: the saved file
	// is in the task's directory, which a delegating sibling can write.
	if err := w.checkPatch(ctx, patch, entries); err != nil {
		return "", err
	}
	unlock, err := w.repo.lock(ctx, true)
	if err != nil {
		return "", err
	}
	defer unlock()
	// A link that leads out of the tree lands nothing but the way there:
	// the whole patch is refused and kept, as a conflicting one is.
	links, err := w.patchLinks(ctx, entries)
	if err != nil {
		return "", err
	}
	if len(links) > 0 {
		out.Links, w.config.Links = links, links
		return linksRefused(links), nil
	}
	pre, err := savePreimages(w.repo.top, entries)
	if err != nil {
		return "", err
	}
	return w.applyWhole(ctx, base, patch, entries, out, theirs, pre)
}

// writeDenied are the paths of entries (relative to the tree's top) that
// w.WriteDenied forbids.
func (w *Workspace) writeDenied(entries []rawEntry) []string {
	if w.WriteDenied == nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if w.WriteDenied(filepath.Join(w.repo.top, filepath.FromSlash(e.path))) {
			out = append(out, e.path)
		}
	}
	return out
}

// applyWhole applies patch to the work tree, or merges it file by file
// when git apply refuses it, and puts every file back as it was (pre) when
// either fails after writing some: git apply checks every hunk before it
// writes, but a write can still fail (a directory the user turned into a
// file, a full disk, a permission), and the merge writes file by file.
func (w *Workspace) applyWhole(ctx context.Context, base string, patch []byte, entries []rawEntry, out *Outcome,
	theirs func([]rawEntry) (func(string) string, func(), error), pre *preimages) (string, error) {
	// Applied on a private index and moved in by rename: the user's index
	// is never read or written, nothing is staged, and no path it changes
	// is ever missing from the tree (applyByRename).
	err := w.applyByRename(ctx, base, patch, pre)
	if err == nil {
		out.Applied = true
		return "", nil
	}
	if why, wrote := w.rollBack(pre, out, "git apply", err); wrote {
		return why, nil
	}
	var ge *GitError
	if !errors.As(err, &ge) || ctx.Err() != nil {
		return "", err
	}
	file, cleanup, err := theirs(entries)
	if err != nil {
		return "", err
	}
	defer cleanup()
	merged, err := w.mergeClean(ctx, base, entries, file)
	if err != nil {
		if why, wrote := w.rollBack(pre, out, "the three-way merge", err); wrote {
			return why, nil
		}
		return "", err
	}
	if merged {
		out.Applied, out.Merged = true, true
		return "", nil
	}
	return strings.TrimSpace(ge.Stderr), nil
}

// rollBack puts back what a failed landing step (what) wrote, and says so:
// wrote is false when it had written nothing (the tree is as it was).
// Paths it cannot put back are named in out.Partial, their earlier
// versions kept in out.Preimages.
func (w *Workspace) rollBack(pre *preimages, out *Outcome, what string, err error) (string, bool) {
	n, failed := pre.restore()
	if n == 0 && len(failed) == 0 {
		return "", false
	}
	why := err.Error()
	var ge *GitError
	if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
		why = strings.TrimSpace(ge.Stderr)
	}
	if len(failed) == 0 {
		return fmt.Sprintf("%s failed partway (%s); the %d file(s) it had written were put back as they were, so nothing in the tree changed", what, why, n), true
	}
	keepDir, prefix := cmp.Or(w.keepDir, w.state), ""
	if w.id != "" {
		prefix = w.id + "."
	}
	out.Partial, out.Preimages = failed, pre.keep(keepDir, prefix, failed)
	kept := "their earlier versions could not be kept"
	if out.Preimages != "" {
		kept = "their earlier versions are in " + out.Preimages
	}
	return fmt.Sprintf("%s failed partway (%s); %d file(s) were put back, but these could NOT be and are left as the landing wrote them: %s (%s)",
		what, why, n, strings.Join(failed, "; "), kept), true
}

// overlayPatch diffs the snapshot against the snapshot-plus-upper-layer,
// looking only at the paths the upper layer names. It builds a small index
// holding just the child's files, so every git call reads a few entries,
// not the repository's index: two git calls in the common case, a third
// when the child created files (to drop the ones .gitignore excludes).
func (w *Workspace) overlayPatch(ctx context.Context, base string) ([]byte, []rawEntry, error) {
	c, err := ReadUpper(w.upper)
	if err != nil {
		return nil, nil, fmt.Errorf("isolate: read overlay changes: %w", err)
	}
	specs := c.pathspecs()
	if len(specs) == 0 {
		return nil, nil, nil
	}
	index := filepath.Join(w.state, "changes.index")
	os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if len(c.Set) > 0 {
		// Hash the child's files from the upper layer, with git's built-in
		// conversions (line endings) and only the user's filters HEAD's
		// .gitattributes name (gitIn), as the base snapshot's
		// .gitattributes give them to paths: the upper layer holds no
		// .gitattributes the child did not write, so git reads the base's
		// from the index, seeded with them. They are what the snapshot
		// hashed the tree with (the tree's at spawn, uncommitted changes
		// included) and what the landing writes with (applyByRename): a
		// file HEAD's and the tree's .gitattributes filter differently
		// went through clean with one and smudge with the other, and
		// landed as bytes the child never wrote (review30 P2-2).
		upEnv := append([]string{"GIT_DIR=" + w.repo.gitDir, "GIT_WORK_TREE=" + w.upper}, env...)
		if w.repo.keptFilters(ctx) != nil {
			attrs, err := w.repo.attrsIn(ctx, base)
			if err != nil {
				return nil, nil, fmt.Errorf("isolate: the base's .gitattributes: %w", err)
			}
			if info := attrsInfo(attrs, nil); len(info) > 0 {
				if _, err := w.repo.gitIn(ctx, w.upper, upEnv, info, "update-index", "-z", "--index-info"); err != nil {
					return nil, nil, fmt.Errorf("isolate: the base's .gitattributes: %w", err)
				}
			}
		}
		if _, err := w.repo.gitIn(ctx, w.upper, upEnv, []byte(strings.Join(c.Set, "\x00")+"\x00"),
			"update-index", "--add", "-z", "--stdin"); err != nil {
			return nil, nil, fmt.Errorf("isolate: hash changed files: %w", err)
		}
	}
	var raw bytes.Buffer
	for chunk := range chunks(specs, 512) {
		args := append([]string{"diff-index", "--cached", "--raw", "-z", "-p", "--binary", "--full-index",
			"--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", base, "--"}, chunk...)
		out, err := w.repo.git(ctx, env, args...)
		if err != nil {
			return nil, nil, fmt.Errorf("isolate: diff: %w", err)
		}
		raw.WriteString(out)
	}
	patch, entries := splitRawPatch(raw.Bytes())
	// An added path is new to the snapshot; if .gitignore excludes it, it
	// is not part of the change (a tracked path is never ignored).
	var added []string
	for _, e := range entries {
		if e.status == 'A' {
			added = append(added, e.path)
		}
	}
	if len(added) == 0 {
		return patch, entries, nil
	}
	out, err := w.repo.gitIn(ctx, w.repo.top, []string{"GIT_LITERAL_PATHSPECS=0"}, []byte(strings.Join(added, "\x00")+"\x00"),
		"check-ignore", "--no-index", "-z", "--stdin")
	var ge *GitError
	if err != nil && !(errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "") {
		return nil, nil, fmt.Errorf("isolate: %w", err) // exit 1 with no message: nothing ignored
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			ignored[p] = true
		}
	}
	if len(ignored) == 0 {
		return patch, entries, nil
	}
	return dropFiles(patch, entries, ignored)
}

// dropFiles removes whole files from a patch. Every raw entry has exactly
// one "diff --git" section, in the same order, and no content line can
// start with "diff --git" (content lines carry a +, - or space prefix).
func dropFiles(patch []byte, entries []rawEntry, drop map[string]bool) ([]byte, []rawEntry, error) {
	starts := sectionStarts(patch)
	// Sections are matched to paths by their headers, not by count: a
	// change of type (a file become a link) is one change but two sections.
	var out bytes.Buffer
	for i, st := range starts {
		end := len(patch)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		path, ok := sectionPath(patch[st:end])
		if !ok {
			return nil, nil, fmt.Errorf("isolate: cannot read the file name of a patch section: %.80q", patch[st:end])
		}
		if !drop[path] {
			out.Write(patch[st:end])
		}
	}
	var kept []rawEntry
	for _, e := range entries {
		if !drop[e.path] {
			kept = append(kept, e)
		}
	}
	return out.Bytes(), kept, nil
}

// sectionPath reads the path of a "diff --git a/P b/P" section (no renames,
// so both halves name the same path; git quotes them C-style when needed).
func sectionPath(section []byte) (string, bool) {
	line := string(section)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	rest := strings.TrimPrefix(line, "diff --git ")
	if strings.HasPrefix(rest, "\"") {
		// "a/P" "b/P"
		if j := strings.Index(rest, "\" \""); j > 0 {
			if p, err := strconv.Unquote(rest[:j+1]); err == nil {
				return strings.TrimPrefix(p, "a/"), true
			}
		}
		return "", false
	}
	// a/P b/P with equal halves.
	if n := len(rest) - len("a/ b/"); n > 0 && n%2 == 0 {
		return rest[len("a/") : len("a/")+n/2], true
	}
	return "", false
}

// childFile is where the child's version of a repository path is.
func (w *Workspace) childFile(rel string) string {
	if w.Mode == ModeOverlay {
		return filepath.Join(w.upper, filepath.FromSlash(rel))
	}
	return filepath.Join(w.Root, filepath.FromSlash(rel))
}

// chunks yields s in pieces of at most n, keeping argv within limits.
func chunks(s []string, n int) func(func([]string) bool) {
	return func(yield func([]string) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}

// splitRawPatch separates `--raw -z -p` output (possibly several runs
// concatenated) into the patch and the list of paths it touches.
func splitRawPatch(b []byte) (patch []byte, files []rawEntry) {
	var out bytes.Buffer
	for len(b) > 0 {
		for len(b) > 0 && b[0] == ':' {
			meta := bytes.IndexByte(b, 0)
			if meta < 0 {
				return append(out.Bytes(), b...), files
			}
			fields := strings.Fields(string(b[1:meta])) // srcmode dstmode src dst status
			rest := b[meta+1:]
			end := bytes.IndexByte(rest, 0)
			if end < 0 {
				end = len(rest)
			}
			e := rawEntry{path: string(rest[:end])}
			if len(fields) == 5 && fields[4] != "" {
				e.status, e.newMode, e.newBlob = fields[4][0], fields[1], fields[3]
			}
			files = append(files, e)
			b = rest[min(end+1, len(rest)):]
		}
		if len(b) > 0 && b[0] == 0 {
			b = b[1:]
		}
		// The patch runs until the next run's raw section, which starts
		// with ':' at the beginning of a line.
		next := bytes.Index(b, []byte("\n:"))
		if next < 0 {
			out.Write(b)
			break
		}
		out.Write(b[:next+1])
		b = b[next+1:]
	}
	return out.Bytes(), files
}

// addWorktree makes the fallback copy: a commit of the snapshot tree (no
// ref points at it) checked out as a detached worktree inside the common
// git dir, where it never shows in git status, glob or grep of the parent.
func (w *Workspace) addWorktree(ctx context.Context, rel string) error {
	tree, err := w.snap.wait()
	if err != nil {
		return err
	}
	commit, err := w.repo.git(ctx, snapshotIdentity(), "commit-tree", "-m", "brood snapshot for "+w.id, tree)
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	wt := filepath.Join(w.repo.common, "brood-worktrees", w.id)
	if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	if _, err := w.repo.worktree(ctx, "add", "--detach", "--quiet", wt, strings.TrimSpace(commit)); err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	w.Mode, w.Root, w.Dir, w.copyStart = ModeWorktree, wt, filepath.Join(wt, rel), strings.TrimSpace(commit)
	// Where git keeps this worktree's index and HEAD, read now, before the
	// child can touch the worktree's .git file.
	gitDir, err := w.repo.gitIn(ctx, wt, nil, nil, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	w.gitDir = strings.TrimSpace(gitDir)
	return w.saveLandIndex()
}

// childGit runs git on the child's worktree without trusting anything the
// child could have written there: the git dir is the one recorded at
// creation (the worktree's .git file is ignored), and no hook, fsmonitor or
// other configured command of the repository may run.
func (w *Workspace) childGit(ctx context.Context, args ...string) (string, error) {
	env := []string{"GIT_DIR=" + w.gitDir, "GIT_WORK_TREE=" + w.Root}
	safe := []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.sshCommand=false", "-c", "diff.external="}
	return w.repo.gitIn(ctx, w.Root, env, nil, append(safe, args...)...)
}

// worktreePatch snapshots the worktree with its own index (refreshed, so
// only files the child touched are re-hashed) and diffs it against the base.
func (w *Workspace) worktreePatch(ctx context.Context, base string) ([]byte, []rawEntry, error) {
	if w.gitDir == "" {
		return nil, nil, fmt.Errorf("isolate: the worktree's git dir was not recorded")
	}
	if _, err := w.landGit(ctx, "add", "-A"); err != nil {
		return nil, nil, fmt.Errorf("isolate: %w", err)
	}
	tree, err := w.landGit(ctx, "write-tree")
	if err != nil {
		return nil, nil, fmt.Errorf("isolate: %w", err)
	}
	if err := w.forgetChildGit(); err != nil {
		return nil, nil, err
	}
	out, err := w.landGit(ctx, "diff-tree", "-r", "--raw", "-z", "-p", "--binary", "--full-index",
		"--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", base, strings.TrimSpace(tree))
	if err != nil {
		return nil, nil, fmt.Errorf("isolate: diff: %w", err)
	}
	patch, files := splitRawPatch([]byte(out))
	return patch, files, nil
}

// writeAtomic writes data to path through a temporary file and a rename, so
// a crash never leaves half a patch.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

type movedResult struct {
	files []string
	err   error
}

// baseMoved lists the paths whose content in the parent's tree now differs
// from the spawn snapshot base.
func (w *Workspace) baseMoved(ctx context.Context, base string) movedResult {
	// Most often nothing moved: the tree's watch says so without a walk,
	// or the walk and the stamps of the paths it lists without a second
	// tree.
	if w.watch.quiet() && w.snap.print.stampsHold(w.repo) {
		return movedResult{}
	}
	now, same, err := takeSnapshotUnless(ctx, w.repo, filepath.Join(w.state, "finish.index"), w.spawnDirty, w.snap.print)
	if err != nil {
		return movedResult{err: err}
	}
	if same || now == base {
		return movedResult{}
	}
	out, err := w.repo.git(ctx, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", base, now)
	if err != nil {
		return movedResult{err: fmt.Errorf("isolate: base moved: %w", err)}
	}
	var files []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			files = append(files, p)
		}
	}
	return movedResult{files: files}
}
