package isolate

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/trust"
)

// checkPatch asks git, the writer, which paths patch would write or
// remove, before it is applied to the user's tree, and refuses
// the whole patch unless every one of them is a path the landing decided
// on (entries, after the configuration was held back) and inside the
// tree. Whatever made the patch text, a section's "diff --git" header is
// not what git writes: a "rename to" or "copy to" line, or a +++ name
// when the header's halves differ, names another path (red team 4, P1-1).
// So no file name is read from the text here: `git apply --numstat -z`
// gives the name each section writes (the new one; the old one of a
// deletion), the same with -R gives each section's old name (a section
// whose ---/+++ names differ moves the file with no rename line, and
// --numstat names only the new one), and --summary says whether any
// section renames or copies, which a patch brood made (always
// --no-renames) never does.
func (w *Workspace) checkPatch(ctx context.Context, patch []byte, entries []rawEntry) error {
	allowed := make(map[string]bool, len(entries))
	for _, e := range entries {
		allowed[e.path] = true
	}
	newNames, oldNames, summary, err := patchNames(ctx, w.repo.top, patch)
	if err != nil {
		return fmt.Errorf("isolate: read the file names of the child's patch: %w", err)
	}
	if line := renameOrCopy(summary); line != "" {
		return fmt.Errorf("isolate: the child's patch renames or copies a file (%s), which brood's own patches never do: nothing was applied", line)
	}
	for _, p := range slices.Concat(newNames, oldNames) {
		if !allowed[p] || !inTree(p) {
			return fmt.Errorf("isolate: the child's patch would write %q, which is not among the files it was checked for (configuration, or outside the tree): nothing was applied", p)
		}
	}
	return nil
}

// patchNames asks git for the names each section of a patch writes, in
// the patch's order: news (the new name; a deletion's old one) and olds
// (the same with -R: the old name; a creation's new one), and the
// --summary, which names renames and copies. The two git calls (in dir;
// they read the patch on stdin and write nothing) run together.
func patchNames(ctx context.Context, dir string, patch []byte) (news, olds []string, summary string, err error) {
	run := func(extra string) (string, error) {
		c := gitx.Cmd{Dir: dir, Stdin: bytes.NewReader(patch), Env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}}
		return c.Run(ctx, "apply", extra, "--numstat", "-z", "--whitespace=nowarn")
	}
	type result struct {
		out string
		err error
	}
	rev := make(chan result, 1)
	go func() {
		out, err := run("-R")
		rev <- result{out, err}
	}()
	fwd, err := run("--summary")
	r := <-rev
	if err == nil {
		err = r.err
	}
	if err != nil {
		return nil, nil, "", err
	}
	news, summary = numstatNames(fwd)
	olds, _ = numstatNames(r.out)
	slices.Reverse(olds) // -R lists the sections last first, to undo them in that order
	return news, olds, summary, nil
}

// renameOrCopy is the first line of a `git apply --summary` that renames
// or copies a file, trimmed; "" when none does.
func renameOrCopy(summary string) string {
	for _, line := range strings.Split(summary, "\n") {
		if strings.HasPrefix(line, " rename ") || strings.HasPrefix(line, " copy ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// numstatNames splits `git apply --numstat -z [--summary]` output into the
// name of each record ("ADDED\tDELETED\tNAME\0") and what follows the
// last record (the summary, when asked for).
func numstatNames(out string) (names []string, rest string) {
	recs := strings.Split(out, "\x00")
	for _, rec := range recs[:len(recs)-1] {
		_, after, ok1 := strings.Cut(rec, "\t")
		_, name, ok2 := strings.Cut(after, "\t")
		if !ok1 || !ok2 {
			// Not a record: keep it as a name, which no allowed path
			// matches, so the patch is refused rather than misread.
			name = rec
		}
		names = append(names, name)
	}
	return names, recs[len(recs)-1]
}

// inTree reports whether a repository-relative, slash-separated path stays
// inside the work tree and out of any .git: not absolute, no empty, "."
// or ".." segment, no segment that is .git in any case (a case-insensitive
// file system's .GIT is .git).
func inTree(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." || strings.EqualFold(s, ".git") {
			return false
		}
	}
	return true
}

// landedConfig is trust.IsConfigPath for a path that lands in the user's
// tree, read also as a case-insensitive file system (macOS's by default,
// a casefold directory, a CIFS or exFAT mount) reads it: .Claude/ is
// .claude/ there, and HFS+ also ignores some invisible code points
// (.c\u200claude), as git's core.protectHFS knows for .git.
func landedConfig(p string) bool {
	return trust.IsConfigPath(p) || trust.IsConfigPath(foldPath(p))
}

// foreignHeld is what a patch made elsewhere never lands unasked, on top
// of configuration: anything under a .brood/, the run records included
// (a worker's patch has no business planting a task's records).
func foreignHeld(p string) bool {
	if landedConfig(p) {
		return true
	}
	return slices.Contains(strings.Split(foldPath(p), "/"), ".brood")
}

// foldPath is p case-folded (each rune to the lower case of its upper
// case: ſ is s, the Kelvin sign k) without the code points HFS+ ignores.
func foldPath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if hfsIgnorable(r) {
			continue
		}
		b.WriteRune(unicode.ToLower(unicode.ToUpper(r)))
	}
	return b.String()
}

// hfsIgnorable are the code points HFS+ leaves out of a name (git's
// is_hfs_dotgit list).
func hfsIgnorable(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// maxForeignLanded bounds what a patch made elsewhere may write into the
// user's tree (the sum of its new files' sizes): the patch's own size is
// no bound, a binary hunk is deflated (177 times smaller at git's level,
// ~1000 by hand) and a delta copies from its base (review15 L4).
const maxForeignLanded = 1 << 30

// declaredBinary sums the sizes the patch's binary hunks declare
// ("literal N", "delta N": what git inflates them to, in memory, before
// it writes anything), so a patch that would inflate past the bound is
// refused before git reads it; a size that does not parse counts as too
// large.
func declaredBinary(patch []byte, limit int64) int64 {
	var sum int64
	for line := range bytes.Lines(patch) {
		rest, ok := bytes.CutPrefix(line, []byte("literal "))
		if !ok {
			rest, ok = bytes.CutPrefix(line, []byte("delta "))
		}
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimRight(rest, "\r\n")), 10, 64)
		if err != nil || n < 0 || n > limit {
			return limit + 1
		}
		sum += n
		if sum > limit {
			return sum
		}
	}
	return sum
}

// checkLandedSize refuses a landing whose new files (in tree, the tree
// the patch makes) come to more than limit bytes: a delta's result is
// not in the patch text, so the sizes are git's (ls-tree -l).
func (w *Workspace) checkLandedSize(ctx context.Context, tree string, entries []rawEntry, limit int64) error {
	var paths []string
	for _, e := range entries {
		if e.status != 'D' {
			paths = append(paths, e.path)
		}
	}
	var sum int64
	for chunk := range chunks(paths, 512) {
		out, err := w.repo.git(ctx, nil, append([]string{"ls-tree", "-l", "-z", tree, "--"}, chunk...)...)
		if err != nil {
			return fmt.Errorf("isolate: %w", err)
		}
		for _, rec := range strings.Split(out, "\x00") {
			meta, _, _ := strings.Cut(rec, "\t")
			f := strings.Fields(meta) // mode type object size
			if len(f) != 4 || f[1] != "blob" {
				continue
			}
			n, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil {
				return fmt.Errorf("isolate: the size of a new file: %q", meta)
			}
			if sum += n; sum > limit {
				return fmt.Errorf("isolate: the patch writes over %d bytes of files, more than a patch made elsewhere may land: nothing was applied", limit)
			}
		}
	}
	return nil
}
