package dispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// modeBits are the mode bits a writer's change of which is reported
// (ModeChanges): group and others' write, set-user-ID and set-group-ID.
// Inside its tree a writer changes modes as writing allows (a build's
// chmod +x), but a project directory or a script others may now write,
// or one that runs as its owner, is a local user's way in, and git's
// status does not show it (it tracks the executable bit alone).
const modeBits = 0o022 | 0o6000

// addModes records in st the mode bits (st_mode & 07777) of the tree's
// root (".") and of paths (relative to st.Root: the files the snapshot
// lists and those whose stat git found changed; a chmod changes a file's
// ctime): an lstat each, on the dirty set, not the tree.
func addModes(st *TreeState, paths []string) {
	st.Modes = map[string]uint32{}
	for _, p := range append([]string{"."}, paths...) {
		if p == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(st.Root, p))
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		if s, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.Modes[p] = s.Mode & 0o7777
		}
	}
}

// ModeChanges lists, sorted, each path of b whose mode gained one of
// modeBits since a: "path 0755→0777", or "path now 0666" where a did not
// record the path (a file clean before: its mode was not read) and it
// is now world-writable, set-user-ID or set-group-ID. Paths under .brood/
// never count.
func ModeChanges(a, b *TreeState) []string {
	if a == nil || b == nil || a.Root != b.Root {
		return nil
	}
	var out []string
	for p, mb := range b.Modes {
		if p == ".brood" || strings.HasPrefix(p, ".brood/") {
			continue
		}
		switch ma, known := a.Modes[p]; {
		case known && (mb&^ma)&modeBits != 0:
			out = append(out, fmt.Sprintf("%s %04o→%04o", p, ma, mb))
		case !known && mb&(0o002|0o6000) != 0:
			out = append(out, fmt.Sprintf("%s now %04o", p, mb))
		}
	}
	slices.Sort(out)
	return out
}
