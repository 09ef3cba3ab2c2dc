package isolate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ApplyOptions describe a patch made away from this tree: by a child on
// another host (internal/codesnap), against a tree object this repository
// holds.
type ApplyOptions struct {
	// Dir is inside the work tree to apply to.
	Dir string
	// Base is the tree object the patch was made against (the submitter's
	// snapshot): the three-way merge's base. It must be in the repository.
	Base string
	// Patch is a `git diff --binary --full-index --no-renames` patch with
	// a/ and b/ prefixes.
	Patch []byte
	// StateDir keeps the patch (Outcome.Patch, under isolate/), refused
	// configuration changes (config.patch) and the merge scratch files;
	// empty means a new temporary directory, kept only when it holds
	// something the user must see.
	StateDir string
	// KeepDir is as Options.KeepDir.
	KeepDir string
	// AllowConfig lets the patch change brood's and Claude Code's
	// configuration (as Options.AllowConfig); otherwise those changes are
	// held back in StateDir/config.patch and named in the outcome.
	AllowConfig bool
	// MaxLanded bounds the bytes of files the patch may write (its new
	// files' sizes, and what its binary hunks say they inflate to);
	// 0 is 1 GiB.
	MaxLanded int64
	// WriteDenied is as Workspace.WriteDenied: a patch that writes a path
	// it forbids is refused whole and kept (Outcome.Refused names them).
	WriteDenied func(path string) bool
}

// ApplyPatch brings a patch made elsewhere back the way Finish brings a
// local child's: under the repository's apply lock, with plain `git apply`
// (every hunk checked before anything is written; the index never
// touched), and when that refuses, a clean three-way merge of every file
// against Base as the second chance. Whole or not at all: on conflict
// nothing was written, Outcome.Conflict has git's words and Outcome.Patch
// (also KeptAt) the kept patch.
func ApplyPatch(ctx context.Context, opts ApplyOptions) (*Outcome, error) {
	r, err := openRepo(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	state, own := opts.StateDir, false
	if state == "" {
		if state, err = os.MkdirTemp("", "brood-apply-"); err != nil {
			return nil, fmt.Errorf("isolate: %w", err)
		}
		own = true
	} else if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	w := &Workspace{Mode: ModeWorktree, repo: r, state: filepath.Join(state, "isolate"), keepDir: opts.KeepDir, allowConfig: opts.AllowConfig,
		WriteDenied: opts.WriteDenied}
	if err := os.MkdirAll(w.state, 0o700); err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	limit := opts.MaxLanded
	if limit <= 0 {
		limit = maxForeignLanded
	}
	out, err := w.applyForeign(ctx, opts.Base, opts.Patch, limit)
	if own && (err != nil || out.Conflict == "" && out.ConfigPatch == "") {
		os.RemoveAll(state)
		if out != nil {
			out.Patch = ""
		}
	}
	return out, err
}

func (w *Workspace) applyForeign(ctx context.Context, base string, patch []byte, limit int64) (*Outcome, error) {
	out := &Outcome{}
	if len(patch) == 0 {
		out.Applied = true
		return out, nil
	}
	if n := declaredBinary(patch, limit); n > limit {
		return nil, fmt.Errorf("isolate: the patch's binary hunks say they make %d bytes, over the %d a patch made elsewhere may land: nothing was applied", n, limit)
	}
	// The child's tree, rebuilt here from base and patch: the files list
	// and the merge's "theirs" come from it, not from anything sent along.
	whole := filepath.Join(w.state, "foreign.patch")
	if err := writeAtomic(whole, patch); err != nil {
		return nil, fmt.Errorf("isolate: save patch: %w", err)
	}
	defer os.Remove(whole)
	index := filepath.Join(w.state, "foreign.index")
	os.Remove(index)
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := w.repo.git(ctx, env, "read-tree", base); err != nil {
		return nil, fmt.Errorf("isolate: the patch's base tree %s is not in %s: %w", base, w.repo.top, err)
	}
	if _, err := w.repo.git(ctx, env, "apply", "--cached", "--whitespace=nowarn", whole); err != nil {
		return nil, fmt.Errorf("isolate: the patch does not apply to its own base %s: %w", base, err)
	}
	child, err := w.repo.git(ctx, env, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	child = strings.TrimSpace(child)
	// What lands is git's own patch from base to that tree, never the
	// text that came: its sections name exactly the paths the tree
	// changed, one per file (no renames or copies), so the configuration
	// hold-back cuts it by the names git writes (red team 4, P1-1: a
	// "rename to" or a +++ name other than the header's wrote a held-back
	// path).
	raw, err := w.repo.git(ctx, nil, "diff-tree", "-r", "--raw", "-z", "-p", "--binary", "--full-index",
		"--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", base, child)
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	patch, entries := splitRawPatch([]byte(raw))
	if err := w.checkLandedSize(ctx, child, entries, limit); err != nil {
		return nil, err
	}
	for _, e := range entries {
		if foreignHeld(e.path) && !landedConfig(e.path) {
			// A run record under .brood/: held back whatever the agent
			// may change, as the programs trusted hooks run are.
			w.programs = append(w.programs, e.path)
		}
	}
	conflict, err := w.land(ctx, base, patch, entries, out, func(es []rawEntry) (func(string) string, func(), error) {
		theirs, dir, err := w.writeBlobs(ctx, child, es)
		cleanup := func() { os.RemoveAll(dir) }
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		return func(rel string) string { return theirs[rel] }, cleanup, nil
	})
	if err != nil {
		return nil, err
	}
	if conflict != "" {
		out.Conflict = conflict
		out.KeptAt = out.Patch
	}
	return out, nil
}

// writeBlobs writes tree's version of every modified regular file to a
// scratch directory (the merge's "theirs"); other entries make mergeClean
// refuse anyway.
func (w *Workspace) writeBlobs(ctx context.Context, tree string, entries []rawEntry) (map[string]string, string, error) {
	var mod []rawEntry
	for _, e := range entries {
		if e.status == 'M' {
			mod = append(mod, e)
		}
	}
	files := map[string]string{}
	if len(mod) == 0 {
		return files, "", nil
	}
	blobs, err := w.catBlobs(ctx, tree, mod)
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp(w.state, "theirs-")
	if err != nil {
		return nil, "", fmt.Errorf("isolate: %w", err)
	}
	for i, e := range mod {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, blobs[i], 0o600); err != nil {
			return nil, dir, fmt.Errorf("isolate: %w", err)
		}
		files[e.path] = p
	}
	return files, dir, nil
}
