package dispatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/taskdir"
)

// TreeState fingerprints the files of a work tree that could change: in a
// git repository, every file git reports as modified or untracked, with a
// hash of its content, and every ignored path git lists (ignored.go), by
// its metadata; outside one, every file's size and
// modification time, up to a bound. Comparing two states says which files
// changed in between, at a cost that follows the dirty set, not the tree.
type TreeState struct {
	Git bool
	// Root is the directory Files are relative to: the repository's top
	// level, or the walked root outside one.
	Root  string            `json:",omitempty"`
	Files map[string]string // path relative to the root -> fingerprint
	// Partial is set when the non-git walk hit its bound.
	Partial bool
	// Head is HEAD's commit ("" unborn), HeadRef the branch HEAD names
	// ("" detached), Refs every ref (name -> object id: branches, tags,
	// refs/stash, remotes): a writer's commit moves them (treerefs.go).
	Head    string            `json:",omitempty"`
	HeadRef string            `json:",omitempty"`
	Refs    map[string]string `json:",omitempty"`
	// GitDirs are the real paths of the git directory and the common
	// directory (treerefs.go gitDirs).
	GitDirs []string `json:",omitempty"`
	// Nested are the nested repositories' states (untracked clones,
	// submodules), by their directory below Root (SnapshotNested), and
	// NestedLeftOut those past its bound.
	Nested        map[string]*TreeState `json:",omitempty"`
	NestedLeftOut []string              `json:",omitempty"`
	// IgnoredCut counts the ignored paths past maxIgnored, not
	// fingerprinted (ignored.go); IgnoredUnlisted is set when git could
	// not list the ignored paths at all.
	IgnoredCut      int  `json:",omitempty"`
	IgnoredUnlisted bool `json:",omitempty"`
	// IgnoredWhole are the directories listed whole that the rules ignore
	// by their own name (ignored.go ignoredWhole).
	IgnoredWhole []string `json:",omitempty"`
	// ExcludePrint fingerprints the git dirs' info/exclude files.
	ExcludePrint string `json:",omitempty"`
	// Modes are the mode bits of the root (".") and the dirty files
	// (addModes): ModeChanges reports those a writer gave others.
	Modes map[string]uint32 `json:",omitempty"`
}

const maxWalk = 20000

// SnapshotTree takes a TreeState of root.
//
// The walk (git status, whose paths are the top level's) and the question
// of where the top level is (rev-parse) run side by side: a writer's
// parent walks before and after it, on the critical path both times.
func SnapshotTree(ctx context.Context, root string) (*TreeState, error) {
	type answer struct {
		out []byte
		err error
	}
	topc, statc, ignc := make(chan answer, 1), make(chan answer, 1), make(chan answer, 1)
	var whole []string
	var refs TreeState
	refsc := make(chan struct{})
	go func() {
		defer close(refsc)
		snapshotRefs(ctx, root, &refs)
	}()
	go func() {
		top, err := gitOutput(ctx, root, "rev-parse", "--show-toplevel")
		topc <- answer{top, err}
		if err != nil {
			ignc <- answer{nil, err}
			return
		}
		// The ignored paths, from the top (its paths are the top's, as
		// status's are): a file a writer hides by ignoring it is still
		// its change (ignored.go).
		out, err := listIgnored(ctx, strings.TrimSpace(string(top)))
		if err == nil {
			whole = ignoredWhole(ctx, strings.TrimSpace(string(top)), out)
		}
		ignc <- answer{out, err}
	}()
	go func() {
		// The entries whose stat changed, re-hashed or not (diff-files
		// refreshes nothing; nor does status write the index back:
		// GIT_OPTIONAL_LOCKS=0).
		out, err := gitOutput(ctx, root, "diff-files", "--name-only", "-z", "--no-renames")
		statc <- answer{out, err}
	}()
	out, err := gitOutput(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	top, stat, ign := <-topc, <-statc, <-ignc
	<-refsc
	if err == nil && top.err == nil {
		st := gitState(strings.TrimSpace(string(top.out)), out)
		st.Head, st.HeadRef, st.Refs, st.GitDirs, st.ExcludePrint = refs.Head, refs.HeadRef, refs.Refs, refs.GitDirs, refs.ExcludePrint
		var dirty []string
		if stat.err == nil {
			addCleanFiltered(ctx, st, stat.out)
			dirty = strings.Split(string(stat.out), "\x00")
		}
		addModes(st, append(slices.Collect(maps.Keys(st.Files)), dirty...))
		if ign.err == nil {
			addIgnored(st, ign.out)
			st.IgnoredWhole = whole
		} else {
			st.IgnoredUnlisted = true
		}
		return st, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return walkState(root)
}

// gitOutput runs git through gitx: the tree snapshot taken before and
// after every writer never runs what the repository (or the writer, in
// its .git/config) configured, an fsmonitor above all, nor any filter,
// the user's own included (gitx.Cmd.NoFilters): an in-place writer's
// .gitattributes would choose which runs, unconfined, on what it wrote.
// The status only lists paths (hashFile fingerprints them); a filtered
// file a writer merely touched may be listed as changed, and one it wrote
// in its clean form is found by addCleanFiltered.
func gitOutput(ctx context.Context, dir string, args ...string) ([]byte, error) {
	out, err := gitx.Cmd{Dir: dir, NoFilters: true}.Run(ctx, args...)
	return []byte(out), err
}

// gitState reads porcelain output; its paths are relative to the
// repository's top level, and so are the state's.
func gitState(root string, porcelain []byte) *TreeState {
	st := &TreeState{Git: true, Root: root, Files: map[string]string{}}
	for _, rec := range bytes.Split(porcelain, []byte{0}) {
		if len(rec) < 4 {
			continue
		}
		code, path := string(rec[:2]), string(rec[3:])
		st.Files[path] = code + ":" + hashFile(filepath.Join(root, path))
	}
	return st
}

// addCleanFiltered fingerprints the files whose stat changed (statDirty,
// diff-files' list) that status did not list: their content is the
// index's blob as it is, which for a file .gitattributes give a filter
// is its clean form, not the smudged one the tree holds (a writer can
// write a filtered file's clean form, e.g. a git-lfs pointer over the big
// file, and an unfiltered status takes it for unchanged; review30 P3-3).
// Only those with a filter attribute are kept: any other such file was
// only touched. The attribute is asked of the tree's .gitattributes and of
// the index's: a writer writes the tree's, and one it makes may be
// ignored, so never listed (review32 P3-1: d/.gitattributes unsetting the
// filter, ignored by a d/.gitignore); a change of the index's is on the
// list itself.
func addCleanFiltered(ctx context.Context, st *TreeState, statDirty []byte) {
	var cand []string
	for _, p := range strings.Split(string(statDirty), "\x00") {
		if _, listed := st.Files[p]; p != "" && !listed {
			cand = append(cand, p)
		}
	}
	if len(cand) == 0 {
		return
	}
	for _, source := range [][]string{nil, {"--cached"}} {
		c := gitx.Cmd{Dir: st.Root, NoFilters: true, Stdin: strings.NewReader(strings.Join(cand, "\x00") + "\x00")}
		out, err := c.Run(ctx, append(append([]string{"check-attr"}, source...), "-z", "--stdin", "filter")...)
		if err != nil {
			continue
		}
		recs := strings.Split(out, "\x00")
		for i := 0; i+2 < len(recs); i += 3 { // path, attribute, value
			if _, done := st.Files[recs[i]]; !done && recs[i+2] != "unspecified" && recs[i+2] != "unset" {
				st.Files[recs[i]] = "filtered:" + hashFile(filepath.Join(st.Root, recs[i]))
			}
		}
	}
}

// hashFile fingerprints the entry at path as itself: a symbolic link by
// its target (so a link retargeted is a change, and no link is followed
// out of the tree, nor into a FIFO or a device the parent would block
// on), a regular file by its content, anything else by its type.
func hashFile(path string) string {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return "absent"
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(path)
		if err != nil {
			return "unreadable"
		}
		return "link:" + t
	case !fi.Mode().IsRegular():
		return "type:" + fi.Mode().Type().String()
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "absent"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func walkState(root string) (*TreeState, error) {
	st := &TreeState{Root: root, Files: map[string]string{}}
	addModes(st, nil) // the root's; the files' from the walk's own lstat
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".brood" || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if len(st.Files) >= maxWalk {
			st.Partial = true
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		st.Files[rel] = fmt.Sprintf("%d:%d", info.Size(), info.ModTime().UnixNano())
		if s, ok := info.Sys().(*syscall.Stat_t); ok && info.Mode()&fs.ModeSymlink == 0 {
			st.Modes[rel] = s.Mode & 0o7777
		}
		return nil
	})
	return st, err
}

// Changed lists the paths whose fingerprint differs between a and b, sorted,
// ignored ones included (an ignored directory b holds whole and a did not
// is named by its files: expandNewIgnored). Paths under .brood/ (brood's
// own records) never count.
func Changed(a, b *TreeState) []string {
	var out []string
	seen := map[string]bool{}
	for p, fa := range a.Files {
		seen[p] = true
		if b.Files[p] != fa {
			out = append(out, p)
		}
	}
	for p := range b.Files {
		if !seen[p] {
			out = append(out, p)
		}
	}
	out = slices.DeleteFunc(out, func(p string) bool {
		return p == ".brood" || strings.HasPrefix(p, ".brood/")
	})
	slices.Sort(out)
	out = expandNewIgnored(a, b, out)
	slices.Sort(out)
	return slices.Compact(out)
}

// Expect is what the parent knows about a dispatch when it checks the result.
type Expect struct {
	TaskID   string
	Agent    string
	ReadOnly bool
	// Changed is what really changed in the work tree while the child ran,
	// when the parent could observe it (nil: not observed, e.g. isolated).
	Changed []string
	// Observed is true when Changed is meaningful.
	Observed bool
	// Root is the directory Changed is relative to (TreeState.Root).
	Root string
	// Refs are the git refs the child made, moved or deleted (RefChanges),
	// one line each: a change as a file's is.
	Refs []string
}

// Verify checks a result.json before its summary is accepted, and returns
// one line per failed check (none: accepted).
func Verify(path string, want Expect) (*Result, []string) {
	td, err := taskdir.FromPath(filepath.Dir(path))
	if err != nil {
		return nil, []string{err.Error()}
	}
	r, fails, _ := VerifyDir(td, want)
	return r, fails
}

// VerifyDir checks the result.json of a task directory (read without
// following links). readErr is why there is no result to judge: missing,
// not a regular file, or not JSON (a *taskdir.ParseError naming the file).
func VerifyDir(td *taskdir.Dir, want Expect) (res *Result, fails []string, readErr error) {
	res, fails, _, readErr = VerifyDirHash(td, want)
	return res, fails, readErr
}

// VerifyDirHash is VerifyDir that also returns the sha256 of the bytes it
// judged (HashRecord's form; "" when none could be read): result.json is
// read once, so the hash a verdict keeps is of the file its checks read,
// even when the child's leftovers rewrite it meanwhile.
func VerifyDirHash(td *taskdir.Dir, want Expect) (res *Result, fails []string, hash string, readErr error) {
	var r Result
	data, err := td.ReadJSONBytes(taskdir.Result, &r)
	if data != nil {
		sum := sha256.Sum256(data)
		hash = hex.EncodeToString(sum[:])
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, []string{"result.json does not exist: the child wrote no result"}, hash, err
		}
		return nil, []string{err.Error()}, hash, err
	}
	return &r, verifyResult(&r, want), hash, nil
}

// verifyResult is VerifyDir's checks of a result read.
func verifyResult(r *Result, want Expect) []string {
	var fails []string

	if r.TaskID != want.TaskID {
		fails = append(fails, fmt.Sprintf("result.json is for task %q, not %q", r.TaskID, want.TaskID))
	}
	if !strings.EqualFold(r.Agent, want.Agent) {
		fails = append(fails, fmt.Sprintf("result.json is from agent %q, not %q", r.Agent, want.Agent))
	}
	if !ValidStatus(r.Status) {
		fails = append(fails, fmt.Sprintf("result.json has status %q; valid: done, partial, checkpoint, failed, killed, cancelled", r.Status))
	}
	if want.Observed {
		if want.ReadOnly && len(want.Changed) > 0 {
			fails = append(fails, fmt.Sprintf("read-only agent %s changed files: %s", want.Agent, strings.Join(want.Changed, ", ")))
		}
		if refs := NotFetched(want.Refs); want.ReadOnly && len(refs) > 0 {
			fails = append(fails, fmt.Sprintf("read-only agent %s changed git refs: %s", want.Agent, RefsLine(refs, 50)))
		}
		if r.FilesChanged == nil {
			// An in-place writer whose parent walked the tree before it
			// leaves its account to that parent's walks (null, not []):
			// the parent fills it from want.Changed.
			return fails
		}
		claimed := normalise(r.FilesChanged)
		var missing, extra []string
		for _, p := range want.Changed {
			if !slices.Contains(claimed, p) {
				missing = append(missing, p)
			}
		}
		for _, p := range claimed {
			if !slices.Contains(want.Changed, p) {
				extra = append(extra, p)
			}
		}
		if len(missing) > 0 {
			fails = append(fails, fmt.Sprintf("files_changed omits %s, which changed on disk", strings.Join(missing, ", ")))
		}
		if len(extra) > 0 {
			fails = append(fails, fmt.Sprintf("files_changed lists %s, which did not change on disk", strings.Join(extra, ", ")))
		}
	}
	return fails
}

func normalise(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, filepath.ToSlash(filepath.Clean(p)))
	}
	return out
}
