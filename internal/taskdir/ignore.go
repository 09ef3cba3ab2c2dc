package taskdir

import (
	"bytes"
	"path/filepath"
	"strings"
)

// ignoreHeader is the first line of the .gitignore brood writes in .brood/.
const ignoreHeader = "# brood's run records (written by brood)"

// RecordNames are the names brood writes its run records under in a
// project's .brood/, as .gitignore patterns (a directory ends in "/"):
// kept out of git and out of the tools' view of the tree by .brood's
// .gitignore, and out of a fleet submission whatever the ignore rules say
// (codesnap), while the project's agents and settings under .brood/ stay
// versionable.
func RecordNames() []string {
	return []string{"dispatch/", "records/", "sessions/", "outputs/", "workflows/", "fleet/", "brood-debug.log", "worker.lock"}
}

// stateIgnore is the .gitignore brood writes in a new .brood/.
func stateIgnore() string {
	return ignoreHeader + "\n" + strings.Join(RecordNames(), "\n") + "\n"
}

// ensureIgnore writes .brood/.gitignore under root when it is missing,
// and adds to one brood wrote (its first line is ignoreHeader) the record
// names an older brood did not list (fleet/: a fleet submitter's kept
// patches). A .gitignore the user wrote is left as it is.
func ensureIgnore(root string) error {
	rel := filepath.Join(StateDirName, ".gitignore")
	if _, err := lstatBeneath(root, rel); err != nil {
		return writeBeneath(root, rel, []byte(stateIgnore()), true)
	}
	old, err := readBeneath(root, rel, 64<<10)
	if err != nil || !bytes.HasPrefix(old, []byte(ignoreHeader+"\n")) {
		return nil // not brood's (or unreadable): the user's to keep
	}
	have := map[string]bool{}
	for l := range strings.Lines(string(old)) {
		have[strings.TrimSpace(l)] = true
	}
	add := ""
	for _, n := range RecordNames() {
		if !have[n] {
			add += n + "\n"
		}
	}
	if add == "" {
		return nil
	}
	if !bytes.HasSuffix(old, []byte("\n")) {
		old = append(old, '\n')
	}
	return writeBeneath(root, rel, append(old, add...), true)
}
