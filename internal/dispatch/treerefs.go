package dispatch

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
)

// An in-place writer may commit what it changed (git commit, --amend, a
// stash, a branch or tag moved or made): a change the work tree's status
// against HEAD no longer shows (redteam19 P1-3). The state before the
// writer therefore holds HEAD's commit and every ref (one for-each-ref),
// and the state after it is compared with the commit HEAD was on before
// (ChangedSince) and ref by ref (RefChanges). Nested repositories
// (an untracked clone, a submodule), whose files the top's status never
// lists, are snapshotted the same way (SnapshotNested).

// maxNested bounds the nested repositories one state looks into.
const maxNested = 64

// snapshotRefs fills st's HEAD and refs: one for-each-ref, one rev-parse.
// An unborn HEAD is "" (no commit yet).
func snapshotRefs(ctx context.Context, root string, st *TreeState) {
	if out, err := gitOutput(ctx, root, "for-each-ref", "--format=%(objectname) %(refname)"); err == nil {
		st.Refs = map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			if oid, name, ok := strings.Cut(strings.TrimSpace(l), " "); ok {
				st.Refs[name] = oid
			}
		}
	}
	// HEAD's commit, and the branch it names ("HEAD" when detached).
	if out, err := gitOutput(ctx, root, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD"); err == nil {
		f := strings.Fields(string(out))
		if len(f) == 2 && gitx.IsObjectID(f[0]) {
			st.Head = f[0]
			if f[1] != "HEAD" {
				st.HeadRef = f[1]
			}
		}
	}
	st.GitDirs = gitDirs(ctx, root)
	for _, g := range st.GitDirs {
		st.ExcludePrint += statPrint(filepath.Join(g, "info", "exclude")) + ";"
	}
}

// gitDirs are the real paths of the repository's git directory and its
// common directory (which holds every linked worktree's gitdir), as git
// resolves them from root: a file written under one may move a ref, if
// the path it was written by says .git or not (a shipped `gl -> .git`, a
// gitfile to a separate git dir). Nil when git cannot say.
func gitDirs(ctx context.Context, root string) []string {
	out, err := gitOutput(ctx, root, "rev-parse", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		return nil
	}
	var dirs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(root, l)
		}
		if r, err := filepath.EvalSymlinks(l); err == nil {
			l = r
		}
		if !slices.Contains(dirs, l) {
			dirs = append(dirs, l)
		}
	}
	return dirs
}

// SnapshotNested snapshots each nested repository at dirs (relative to
// st.Root, slash-separated: an untracked clone, a submodule) into
// st.Nested, at most maxNested of them; those left out are named in
// st.NestedLeftOut.
func SnapshotNested(ctx context.Context, st *TreeState, dirs []string) {
	if st == nil || len(dirs) == 0 {
		return
	}
	if len(dirs) > maxNested {
		st.NestedLeftOut = slices.Clone(dirs[maxNested:])
		dirs = dirs[:maxNested]
	}
	st.Nested = map[string]*TreeState{}
	type one struct {
		dir string
		st  *TreeState
	}
	ch := make(chan one, len(dirs))
	for _, d := range dirs {
		go func() {
			s, err := SnapshotTree(ctx, path.Join(st.Root, d))
			if err != nil {
				s = nil
			}
			ch <- one{d, s}
		}()
	}
	for range dirs {
		o := <-ch
		if o.st != nil {
			st.Nested[o.dir] = o.st
		}
	}
}

// NestedDirs are the nested repositories of st (before a writer), to be
// snapshotted again after it.
func (st *TreeState) NestedDirs() []string {
	if st == nil {
		return nil
	}
	var dirs []string
	for d := range st.Nested {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return dirs
}

// ChangedSince is Changed, and besides it every file whose content in the
// work tree differs from the commit HEAD was on in a when HEAD has moved
// since (a commit, an amend, a reset, a checkout: a change committed is a
// change), and the files changed in each nested repository of a (prefixed
// with its directory). err says what could not be compared (a commit gone
// from the object store): the list is then incomplete.
func ChangedSince(ctx context.Context, a, b *TreeState) ([]string, error) {
	out := Changed(a, b)
	var errs []string
	if a.Git && b.Git && a.Head != "" && a.Head != b.Head && gitx.IsObjectID(a.Head) {
		// The work tree against the commit HEAD was on (not HEAD): what
		// the writer committed is listed with what it did not. A file
		// dirty before is Changed's to judge by its content.
		names, err := gitOutput(ctx, b.Root, "diff", "--name-only", "-z", "--no-renames", a.Head, "--")
		if err != nil {
			errs = append(errs, fmt.Sprintf("the files it committed could not be listed: HEAD's commit before it (%s) cannot be read any more (%v)", short(a.Head), firstLine(err.Error())))
		}
		for _, p := range strings.Split(string(names), "\x00") {
			if _, dirty := a.Files[p]; p != "" && !dirty && !slices.Contains(out, p) && p != ".brood" && !strings.HasPrefix(p, ".brood/") {
				out = append(out, p)
			}
		}
	}
	for _, dir := range a.NestedDirs() {
		na, nb := a.Nested[dir], b.Nested[dir]
		if nb == nil {
			errs = append(errs, "the nested repository "+dir+" could not be read after it")
			continue
		}
		sub, err := ChangedSince(ctx, na, nb)
		if err != nil {
			errs = append(errs, dir+": "+err.Error())
		}
		for _, p := range sub {
			out = append(out, path.Join(dir, p))
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

// RefChanges says, one line each, what became of HEAD and every ref
// between a and b (a branch, a tag, refs/stash made, moved or deleted;
// HEAD detached, moved or on another branch), nested repositories' too
// (prefixed with their directory). A ref moved to a commit that does not
// descend from where it was (an amend, a reset) says so. Empty when
// nothing moved or a holds no refs.
func RefChanges(ctx context.Context, a, b *TreeState) []string {
	var out []string
	if a != nil && b != nil && a.Refs != nil && b.Refs != nil {
		out = refLines(ctx, a, b)
	}
	for _, dir := range a.NestedDirs() {
		if nb := b.Nested[dir]; nb != nil {
			for _, l := range RefChanges(ctx, a.Nested[dir], nb) {
				out = append(out, dir+": "+l)
			}
		}
	}
	return out
}

func refLines(ctx context.Context, a, b *TreeState) []string {
	var out []string
	names := make([]string, 0, len(a.Refs)+len(b.Refs))
	for n := range a.Refs {
		names = append(names, n)
	}
	for n := range b.Refs {
		if _, ok := a.Refs[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	checked := 0
	for _, n := range names {
		was, had := a.Refs[n]
		now, has := b.Refs[n]
		switch {
		case !had:
			out = append(out, fmt.Sprintf("%s new (%s)", n, short(now)))
		case !has:
			out = append(out, fmt.Sprintf("%s deleted (was %s)", n, short(was)))
		case was != now:
			l := fmt.Sprintf("%s %s→%s", n, short(was), short(now))
			if checked < 16 && !descends(ctx, b.Root, was, now) {
				l += " (rewritten: " + short(was) + " is not in its history any more)"
			}
			checked++
			out = append(out, l)
		}
	}
	switch {
	case a.HeadRef != b.HeadRef && b.HeadRef == "":
		out = append(out, fmt.Sprintf("HEAD detached at %s (was on %s)", short(b.Head), a.HeadRef))
	case a.HeadRef != b.HeadRef:
		out = append(out, fmt.Sprintf("HEAD now on %s (was %s)", b.HeadRef, cmpOr(a.HeadRef, "detached at "+short(a.Head))))
	case a.HeadRef == "" && a.Head != b.Head:
		out = append(out, fmt.Sprintf("HEAD (detached) %s→%s", short(a.Head), short(b.Head)))
	}
	return out
}

// descends reports whether commit now has was in its history (a fast
// forward); false when git cannot say (was gone: the history rewritten).
func descends(ctx context.Context, root, was, now string) bool {
	if !gitx.IsObjectID(was) || !gitx.IsObjectID(now) {
		return false
	}
	_, err := gitOutput(ctx, root, "merge-base", "--is-ancestor", was, now)
	return err == nil
}

func short(oid string) string {
	if oid == "" {
		return "none"
	}
	return oid[:min(len(oid), 7)]
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// RefsLine joins the first n of refs (RefChanges' lines) and says how
// many more there are: a child can make thousands of tags in one command,
// and each would otherwise reach the parent model's context (review
// commithide P2-2); `brood tasks show` names them all.
func RefsLine(refs []string, n int) string {
	if len(refs) <= n {
		return strings.Join(refs, "; ")
	}
	return fmt.Sprintf("%s; and %d more (brood tasks show names them all)", strings.Join(refs[:n], "; "), len(refs)-n)
}

// NotFetched are the ref lines that are not a remote-tracking ref's
// (refs/remotes/..., in the top repository or a nested one): a fetch by
// the user's editor or a background job moves those while a child runs,
// and a read-only child must not be rejected for it (review commithide
// P2-1).
func NotFetched(refs []string) []string {
	var out []string
	for _, l := range refs {
		name := l
		if _, rest, ok := strings.Cut(l, ": "); ok && !strings.HasPrefix(l, "refs/") {
			name = rest
		}
		if !strings.HasPrefix(name, "refs/remotes/") {
			out = append(out, l)
		}
	}
	return out
}
