package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hiddenEnv carries a policy's Hidden list from the parent to a child that
// applies its own file-system layer (BaseForChild): set by HiddenEnv, read
// and removed by Restrict before anything else runs.
const hiddenEnv = "BROOD_SANDBOX_HIDDEN"

// HiddenEnv is the environment entry that passes p.Hidden to a child that
// calls Restrict after its mounts (BaseForChild), "" when p hides nothing.
func HiddenEnv(p Policy) string {
	hidden := p.HiddenPaths()
	if len(hidden) == 0 {
		return ""
	}
	b, _ := json.Marshal(hidden)
	return hiddenEnv + "=" + string(b)
}

// takeHidden adds the parent's Hidden list from the environment to p and
// removes it, so no grandchild inherits it.
func takeHidden(p Policy) Policy {
	v, ok := os.LookupEnv(hiddenEnv)
	if !ok {
		return p
	}
	os.Unsetenv(hiddenEnv)
	var h []string
	if json.Unmarshal([]byte(v), &h) == nil {
		p.Hidden = append(p.Hidden, h...)
	}
	return p
}

// addReadRules allows reading files everywhere but beneath the hidden
// paths. Landlock only allows, so the rules are built around them: every
// entry of every directory on the way from / to a hidden path is allowed,
// but the hidden path itself and the directories leading to another one.
// An entry made later in such a directory is not readable (it was not
// there to be allowed); a symbolic link needs no rule (its target's
// holds); a directory that cannot be listed grants nothing.
func addReadRules(rfd int, hidden []string, access uint64) error {
	hide := map[string]bool{}
	way := map[string]bool{}
	for _, h := range hidden {
		h = filepath.Clean(h)
		if !filepath.IsAbs(h) || h == "/" {
			continue
		}
		hide[h] = true
		for d := filepath.Dir(h); ; d = filepath.Dir(d) {
			way[d] = true
			if d == "/" {
				break
			}
		}
	}
	if len(hide) == 0 {
		return nil
	}
	dfd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // a directory that cannot be listed grants nothing
	}
	return allowAround(rfd, dfd, "/", hide, way, access)
}

// allowAround adds the rules for one directory on the way to a hidden
// path, open as dfd (which it closes). Each entry is opened beneath that
// descriptor (no walk from / again, no link followed): a directory on the
// way with O_DIRECTORY|O_NOFOLLOW, so that one that became a symbolic
// link since its parent was listed is not descended into (its target's
// entries are not its own: they get no rule from here); any other entry
// with O_PATH|O_NOFOLLOW, given the rule as it is: access is READ_FILE
// alone, which Landlock takes on a directory and on a file alike, so no
// stat is needed to tell them apart (an entry that became a symbolic link
// since the listing gets a rule on the link itself, which grants nothing:
// a path through it is checked where it leads).
func allowAround(rfd, dfd int, dir string, hide, way map[string]bool, access uint64) error {
	f := os.NewFile(uintptr(dfd), dir)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case hide[p]:
		case way[p]:
			// (Whatever the listing said it was: the open decides.)
			sub, err := unix.Openat(dfd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // a link needs no rule; one that cannot be listed grants nothing
			}
			if err := allowAround(rfd, sub, p, hide, way, access); err != nil {
				return err
			}
		case e.Type()&os.ModeSymlink != 0:
		default:
			if err := addReadRuleAt(rfd, dfd, e.Name(), access); err != nil {
				return fmt.Errorf("sandbox: landlock read rule %s: %w", p, err)
			}
		}
	}
	return nil
}

// addReadRuleAt allows access (read rights only) beneath name in the
// directory dfd. An entry gone since the listing, or one this user may
// not reach, needs no rule.
func addReadRuleAt(rfd, dfd int, name string, access uint64) error {
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
