package taskdir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The known projects: the state directories (.brood/, or a Fallback) of
// every project brood has run in as the root, so that no child of one
// project reads another's records (its root's transcripts, owner records,
// tasks, workflow runs and spilled outputs): isolate hides each of them
// from every child. The list is the user's, outside any project:
// $XDG_STATE_HOME/brood/known-projects (~/.local/state/... by default),
// one absolute path a line, most recent first, at most MaxKnown, written
// 0600 tmp+rename under a lock; an entry whose directory is gone is
// dropped on the next write. A project brood never ran in is not on it.
// No child writes it (its sandbox writes its task directory, or its tree
// and caches; an EnsureWritable from a child fails before Remember).

// MaxKnown bounds the known projects: the least recently used beyond it
// are dropped (their records are then readable to other projects'
// children until brood runs there again).
const MaxKnown = 1000

// knownName is the list's file name in the user's state directory.
const knownName = "known-projects"

// KnownFile is the path of the known projects' list; "" without a home.
func KnownFile() string {
	dir := stateHome()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "brood", knownName)
}

// StateBase is the user's brood state directory ($XDG_STATE_HOME/brood):
// the known projects' list and the Fallback state directories; "" without
// a home.
func StateBase() string {
	dir := stateHome()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "brood")
}

func stateHome() string {
	if base := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(base) {
		return base
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "state")
}

// Known are the state directories on the list (KnownFile), absolute and
// clean; none when it is missing or unreadable (a child's case: it is
// hidden from every child).
func Known() []string { return readKnown(KnownFile()) }

func readKnown(file string) []string {
	if file == "" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := filepath.Clean(strings.TrimSpace(sc.Text())); filepath.IsAbs(l) && l != "/" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// Remember puts the project's state directory first on the known
// projects' list (KnownFile), dropping entries whose directory is gone
// and those beyond MaxKnown. Nothing is written when it is first already.
func (p Project) Remember() error {
	file := KnownFile()
	if file == "" {
		return errors.New("no home directory to keep the list of known projects in")
	}
	state, err := filepath.Abs(p.StateDir())
	if err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(state); err == nil {
		state = r
	}
	if have := readKnown(file); len(have) > 0 && have[0] == state {
		return nil
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("remember the project %s in %s: %w", p.root, file, err)
	}
	lock, err := os.OpenFile(file+".lock", os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("remember the project %s: lock %s: %w", p.root, file, err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("remember the project %s: lock %s: %w", p.root, file, err)
	}
	list := []string{state}
	for _, k := range readKnown(file) {
		if len(list) >= MaxKnown {
			break
		}
		if k == state {
			continue
		}
		if fi, err := os.Lstat(k); err == nil && fi.IsDir() {
			list = append(list, k)
		}
	}
	if err := writeKnown(file, list); err != nil {
		return fmt.Errorf("remember the project %s in %s: %w", p.root, file, err)
	}
	return nil
}

// writeKnown writes list to file, 0600, tmp+rename.
func writeKnown(file string, list []string) error {
	f, err := os.CreateTemp(filepath.Dir(file), "."+knownName+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.WriteString(strings.Join(list, "\n") + "\n")
	if werr == nil {
		werr = f.Chmod(0o600)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), file)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
