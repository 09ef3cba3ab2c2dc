package trust

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A trusted hook's script may run more than its command names: a guard
// that sources `"$(dirname "$0")/lib.sh"` runs lib.sh, which a child
// could rewrite. So the project files a shell script sources or runs (as
// far as a static look can tell, and again in what those run) count with
// the script: their content is part of the grant's key, the hook's pins,
// the in-place guard's snapshot and the in-place writer's read-only view.

// Bounds of the look: how deep a chain of scripts is followed, how many
// files are added, and the largest script read.
const (
	sourcedDepth = 4
	sourcedMax   = 64
	scriptMax    = 256 << 10
)

// scriptDirForms are the ways a shell script names its own directory;
// each is replaced by the directory before the script is read as commands.
var scriptDirForms = []string{
	`$(cd "$(dirname "$0")" && pwd)`, `$(cd "$(dirname "$0")"; pwd)`, `$(cd $(dirname $0) && pwd)`,
	`$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`, `$(cd "$(dirname "$BASH_SOURCE")" && pwd)`,
	`$(dirname "$(readlink -f "$0")")`, `$(dirname "$(realpath "$0")")`,
	`$(dirname "${BASH_SOURCE[0]}")`, `$(dirname "$BASH_SOURCE")`, `$(dirname "$0")`, `$(dirname $0)`,
	"`dirname \"$0\"`", "`dirname $0`", `${BASH_SOURCE[0]%/*}`, `${BASH_SOURCE%/*}`, `${0%/*}`,
}

// withSourced is present (absolute paths of files under root) with the
// files its shell scripts source or run, followed through the scripts
// found, sorted and without duplicates.
func withSourced(root string, present []string) []string {
	seen := map[string]bool{}
	out := slices.Clone(present)
	for _, p := range present {
		seen[p] = true
	}
	next := slices.Clone(present)
	for depth := 0; depth < sourcedDepth && len(next) > 0 && len(out) < len(present)+sourcedMax; depth++ {
		var found []string
		for _, p := range next {
			for _, f := range scriptRuns(root, p) {
				if !seen[f] && len(out) < len(present)+sourcedMax {
					seen[f] = true
					out = append(out, f)
					found = append(found, f)
				}
			}
		}
		next = found
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scriptRuns are the project files that the shell script at path sources
// or runs: the program words of its commands (`. lib.sh`, `source x`,
// `./tool`, `sh other.sh`) that name a file under root, resolved against
// the script's own directory and against root (where hooks run). A file
// that is not a shell script runs nothing here.
func scriptRuns(root, path string) []string {
	text, ok := readScript(path)
	if !ok {
		return nil
	}
	dir := filepath.Dir(path)
	for _, f := range scriptDirForms {
		text = strings.ReplaceAll(text, f, dir)
	}
	var out []string
	for _, ws := range ShellCommands(text, root) {
		progs := Programs(ws)
		for _, base := range []string{dir, root} {
			p, _ := NamedFiles(root, base, progs, ws)
			out = append(out, p...)
		}
	}
	return slices.DeleteFunc(out, func(f string) bool { return f == path })
}

// readScript is the text of a shell script (a `#!` line naming a shell,
// or a .sh/.bash name) of at most scriptMax bytes.
func readScript(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > scriptMax {
		return "", false
	}
	data, err := io.ReadAll(io.LimitReader(f, scriptMax))
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return "", false
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	ext := filepath.Ext(path)
	if !isShellLine(string(first)) && ext != ".sh" && ext != ".bash" {
		return "", false
	}
	return string(data), true
}

// isShellLine reports whether a `#!` line names a shell.
func isShellLine(l string) bool {
	if !strings.HasPrefix(l, "#!") {
		return false
	}
	for _, w := range strings.Fields(l[2:]) {
		if strings.HasPrefix(w, "-") {
			continue
		}
		switch strings.TrimRight(filepath.Base(w), "0123456789.") {
		case "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh":
			return true
		case "env":
			continue
		}
		return false
	}
	return false
}
