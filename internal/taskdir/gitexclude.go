package taskdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
)

// KeepRecordsOutOfGit checks that git ignores the run records brood writes
// in the project's .brood/ (RecordNames). A .brood/.gitignore brood did not
// write (a repository can commit one that ignores nothing) is left alone,
// so where git would not ignore them their patterns are added to the
// repository's own .git/info/exclude, which is the person's, never
// committed. It returns a line to say once when it added them, or ""; a
// project outside a git work tree, or records kept elsewhere, need nothing.
func (p Project) KeepRecordsOutOfGit(ctx context.Context) string {
	if p.Elsewhere() {
		return ""
	}
	if old, err := readBeneath(p.root, filepath.Join(StateDirName, ".gitignore"), 64<<10); err == nil && bytes.HasPrefix(old, []byte(ignoreHeader+"\n")) {
		return "" // brood's own (ensureIgnore keeps it whole): a deeper .gitignore wins
	}
	var probes []string
	for _, n := range RecordNames() {
		probe := StateDirName + "/" + strings.TrimSuffix(n, "/")
		if strings.HasSuffix(n, "/") {
			probe += "/x"
		}
		probes = append(probes, probe)
	}
	// (check-ignore takes no pathspec magic, literal included: the probes
	// are brood's own fixed names)
	out, err := gitx.Cmd{Dir: p.root, Env: []string{"GIT_LITERAL_PATHSPECS=0"}, Stdin: strings.NewReader(strings.Join(probes, "\n") + "\n")}.Run(ctx, "check-ignore", "--no-index", "--stdin")
	var ge *gitx.Error
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode() == 1) {
		return "" // 128: not a work tree (or no git): nothing to keep out
	}
	ignored := map[string]bool{}
	for l := range strings.Lines(out) {
		ignored[strings.TrimSpace(l)] = true
	}
	var missing []string
	for i, n := range RecordNames() {
		if !ignored[probes[i]] {
			missing = append(missing, "/"+StateDirName+"/"+n)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	exclude, err := p.ownExclude()
	if err != nil {
		return fmt.Sprintf("brood: git would track brood's run records in %s (%s): add them to your .gitignore or .git/info/exclude (%v)", filepath.Join(p.root, StateDirName), strings.Join(missing, ", "), err)
	}
	old, _ := os.ReadFile(exclude)
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += "# brood's run records (added by brood: the project's .brood/.gitignore does not ignore them)\n" + strings.Join(missing, "\n") + "\n"
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return ""
	}
	// tmp+rename, as every record: a crash leaves the old file or the new.
	tmp := exclude + ".tmp-" + NewID()
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return ""
	}
	if err := os.Rename(tmp, exclude); err != nil {
		_ = os.Remove(tmp)
		return ""
	}
	return fmt.Sprintf("brood: the project's .brood/.gitignore does not keep brood's run records out of git; added %s to %s", strings.Join(missing, ", "), exclude)
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
