package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// devReadable are the entries of /dev a confined child reads: the data
// devices every program may open, its own controlling terminal (a child
// has none: it leads a session of its own, so /dev/tty answers ENXIO),
// and the links to its own descriptors. Every other entry is hidden
// (devHidden): the user's other terminals (/dev/pts: a read takes the
// keystrokes typed there, sudo's and ssh's passwords; red team 21 P1-4),
// the consoles and virtual terminals, serial lines, input devices, raw
// memory and disks, and whatever a later hotplug makes there.
var devReadable = []string{"null", "zero", "full", "random", "urandom", "tty", "fd", "stdin", "stdout", "stderr"}

// devHidden are the paths of /dev outside devReadable, as a child's
// Hidden (addReadRules) adds them, but one that holds a path of keep.
func devHidden(keep []string) []string {
	ents, err := os.ReadDir("/dev")
	if err != nil {
		return []string{"/dev/pts", "/dev/console"}
	}
	var out []string
	for _, e := range ents {
		if slices.Contains(devReadable, e.Name()) {
			continue
		}
		p := filepath.Join("/dev", e.Name())
		if slices.ContainsFunc(keep, func(k string) bool { k = filepath.Clean(k); return k == p || strings.HasPrefix(k, p+"/") }) {
			continue
		}
		out = append(out, p)
	}
	return out
}
