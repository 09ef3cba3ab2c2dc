package taskdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
)

// KeepRecordsOutOfGit makes git ignore the run records brood writes in
// the project's .brood/ (RecordNames), whatever the repository's own
// ignore files say, and returns the lines to say (none when nothing was
// done); a project outside a git work tree, or records kept elsewhere,
// need nothing.
//
// Each record directory but dispatch/ holds a .gitignore of brood's that ignores
// everything in it: git lets the deepest .gitignore decide, so no
// negation a repository ships higher up (a .brood/.gitignore of `!*`,
// even one that copies brood's header) brings a transcript back
// (redteam19 P2-1). One a repository shipped in a record directory is
// replaced, and said. The files at .brood's top (RecordNames' plain
// names) and dispatch/ (viaExclude) are governed by .brood/.gitignore: where it is not
// exactly brood's and git would not ignore them, their patterns are added
// to the repository's own .git/info/exclude, and where a negation still
// wins, that is said on every run.
func (p Project) KeepRecordsOutOfGit(ctx context.Context) []string {
	if p.Elsewhere() {
		return nil
	}
	said := p.ignoreRecordDirs()
	if old, err := readBeneath(p.root, filepath.Join(StateDirName, ".gitignore"), 64<<10); err == nil && broodsOwnIgnore(old) {
		return said // brood's own lines alone: the files at the top are ignored
	}
	if n := p.ignoreTopRecords(ctx); n != "" {
		said = append(said, n)
	}
	return said
}

// viaExclude reports whether record name n is kept out of git through
// .brood/.gitignore and .git/info/exclude rather than a .gitignore of its
// own: the plain files at .brood's top, and dispatch/, whose entries are
// task directories alone (every reader of it, scripts included, takes
// each entry for a task).
func viaExclude(n string) bool { return !strings.HasSuffix(n, "/") || n == "dispatch/" }

// recordDirIgnore is the .gitignore brood keeps in each record directory.
const recordDirIgnore = "# brood's run records (written by brood): nothing here is the repository's\n*\n"

// ignoreRecordDirs makes each record directory and its .gitignore, and
// says which shipped ones it replaced.
func (p Project) ignoreRecordDirs() []string {
	var said []string
	for _, n := range RecordNames() {
		if viaExclude(n) {
			continue
		}
		dir := filepath.Join(StateDirName, strings.TrimSuffix(n, "/"))
		rel := filepath.Join(dir, ".gitignore")
		old, err := readBeneath(p.root, rel, 64<<10)
		if err == nil && string(old) == recordDirIgnore {
			continue
		}
		if err := mkdirModeBeneath(p.root, dir, taskDirMode); err != nil {
			continue // a link where the directory should be: the run stops on it elsewhere
		}
		_, lerr := lstatBeneath(p.root, rel)
		if err := writeBeneath(p.root, rel, []byte(recordDirIgnore), false); err != nil {
			said = append(said, fmt.Sprintf("brood: cannot keep %s out of git (%v): add it to your .git/info/exclude", filepath.Join(p.root, dir), err))
			continue
		}
		if lerr == nil {
			said = append(said, fmt.Sprintf("brood: replaced %s, which did not keep brood's run records out of git, with brood's", filepath.Join(p.root, rel)))
		}
	}
	return said
}

// broodsOwnIgnore reports whether a .brood/.gitignore holds brood's lines
// alone (its header, record names, blank lines): its first line proves
// nothing, a repository can copy it.
func broodsOwnIgnore(b []byte) bool {
	names := RecordNames()
	for l := range strings.Lines(string(b)) {
		l = strings.TrimSpace(l)
		if l != "" && l != ignoreHeader && !slices.Contains(names, l) {
			return false
		}
	}
	return true
}

// ignoreTopRecords keeps the plain record names at .brood's top out of
// git through .git/info/exclude, and says what it did, or that a
// negation in the project's ignore files still wins.
func (p Project) ignoreTopRecords(ctx context.Context) string {
	top := viaExclude
	notIgnored, err := p.notIgnored(ctx, top)
	if err != nil || len(notIgnored) == 0 {
		return ""
	}
	exclude, err := p.ownExclude()
	if err != nil {
		return fmt.Sprintf("brood: git would track brood's run records in %s (%s): add them to your .gitignore or .git/info/exclude (%v)", filepath.Join(p.root, StateDirName), strings.Join(notIgnored, ", "), err)
	}
	old, _ := os.ReadFile(exclude)
	var missing []string
	for _, n := range notIgnored {
		if !slices.Contains(strings.Split(string(old), "\n"), n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 && !writeExclude(exclude, old, missing) {
		return ""
	}
	if still, err := p.notIgnored(ctx, top); err == nil && len(still) > 0 {
		return fmt.Sprintf("brood: the project's ignore files un-ignore brood's %s (a negation such as `!*` in .brood/.gitignore outranks .git/info/exclude): `git add -A` would commit them; remove the negation", strings.Join(still, ", "))
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("brood: the project's .brood/.gitignore does not keep brood's run records out of git; added %s to %s", strings.Join(missing, ", "), exclude)
}

// writeExclude adds lines to the exclude file, tmp+rename.
func writeExclude(exclude string, old []byte, lines []string) bool {
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += "# brood's run records (added by brood: the project's .brood/.gitignore does not ignore them)\n" + strings.Join(lines, "\n") + "\n"
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return false
	}
	tmp := exclude + ".tmp-" + NewID()
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return false
	}
	if err := os.Rename(tmp, exclude); err != nil {
		_ = os.Remove(tmp)
		return false
	}
	return true
}

// notIgnored are the record names keep selects that git would not ignore,
// as /.brood/NAME patterns; an error when the project is no work tree.
func (p Project) notIgnored(ctx context.Context, keep func(string) bool) ([]string, error) {
	var names, probes []string
	for _, n := range RecordNames() {
		if !keep(n) {
			continue
		}
		probe := StateDirName + "/" + strings.TrimSuffix(n, "/")
		if strings.HasSuffix(n, "/") {
			probe += "/x"
		}
		names, probes = append(names, n), append(probes, probe)
	}
	// (check-ignore takes no pathspec magic, literal included: the probes
	// are brood's own fixed names)
	out, err := gitx.Cmd{Dir: p.root, Env: []string{"GIT_LITERAL_PATHSPECS=0"}, Stdin: strings.NewReader(strings.Join(probes, "\n") + "\n")}.Run(ctx, "check-ignore", "--no-index", "--stdin")
	var ge *gitx.Error
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode() == 1) {
		return nil, err // 128: not a work tree (or no git): nothing to keep out
	}
	ignored := map[string]bool{}
	for l := range strings.Lines(out) {
		ignored[strings.TrimSpace(l)] = true
	}
	var missing []string
	for i, n := range names {
		if !ignored[probes[i]] {
			missing = append(missing, "/"+StateDirName+"/"+n)
		}
	}
	return missing, nil
}

// ownExclude is the work tree's .git/info/exclude when .git is a directory
// of the work tree's own (not a link, not a gitdir file naming another
// place a repository could choose).
func (p Project) ownExclude() (string, error) {
	gitDir := filepath.Join(p.root, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory of the work tree's own", gitDir)
	}
	info := filepath.Join(gitDir, "info")
	if fi, err := os.Lstat(info); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", info)
	}
	exclude := filepath.Join(info, "exclude")
	if fi, err := os.Lstat(exclude); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", exclude)
	}
	return exclude, nil
}
