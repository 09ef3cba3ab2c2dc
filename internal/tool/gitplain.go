package tool

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/gitx"
)

// A read-only git command is read-only only while the repository's own
// configuration names no program: core.fsmonitor runs on git status, a
// diff driver's textconv on git log -p, core.pager, aliases, includes...
// A tarball can ship a .git directory, a tree can hold a bare repository's
// layout, a .git file can point anywhere. So the read-only set covers git
// only in a repository whose configuration holds nothing but keys known
// not to name programs, and git -C (or --git-dir, --work-tree) counts as
// covered only into such a repository inside the workspace.

// plainGitKeys are the configuration keys (section.key, or
// section.*.key for any subsection) that name no program.
var plainGitKeys = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true, "core.logallrefupdates": true,
		"core.ignorecase": true, "core.precomposeunicode": true, "core.symlinks": true, "core.autocrlf": true,
		"core.eol": true, "core.safecrlf": true, "core.quotepath": true, "core.abbrev": true, "core.untrackedcache": true,
		"core.checkstat": true, "core.trustctime": true, "core.splitindex": true, "core.sparsecheckout": true,
		"core.sparsecheckoutcone": true, "core.commitgraph": true, "core.multipackindex": true, "core.compression": true,
		"core.longpaths": true,
		"remote.*.url":   true, "remote.*.fetch": true, "remote.*.pushurl": true, "remote.*.push": true, "remote.*.tagopt": true,
		"remote.*.prune": true, "remote.*.mirror": true, "remote.*.promisor": true, "remote.*.partialclonefilter": true,
		"branch.*.remote": true, "branch.*.merge": true, "branch.*.rebase": true, "branch.*.pushremote": true,
		"branch.*.description": true, "user.name": true, "user.email": true, "user.signingkey": true,
		"init.defaultbranch": true, "pull.rebase": true, "pull.ff": true, "push.default": true, "push.autosetupremote": true,
		"fetch.prune": true, "merge.ff": true, "merge.conflictstyle": true, "rebase.autosquash": true, "rebase.autostash": true,
		"extensions.objectformat": true, "extensions.worktreeconfig": true, "extensions.partialclone": true,
		"gc.auto": true, "submodule.*.url": true, "submodule.*.active": true, "diff.renames": true, "diff.algorithm": true,
		"diff.mnemonicprefix": true, "diff.noprefix": true, "diff.colormoved": true, "diff.indentheuristic": true,
		"lfs.repositoryformatversion": true, "color.ui": true, "log.date": true, "log.decorate": true,
	}
})

// plainGitRepo reports whether git run in dir finds a repository whose
// configuration is plain (or no repository at all, where git only fails).
// The repository is gitx.Dirs' (a .git directory, or a "gitdir:" file
// naming one); a .git that is neither (a link) is not plain, nor is a
// directory on the way up that git would take for a bare repository.
func plainGitRepo(dir string) bool {
	dir = filepath.Clean(dir)
	top, gitDir, _, err := gitx.Dirs(dir)
	switch {
	case errors.Is(err, gitx.ErrNoRepo):
		top = ""
	case err != nil:
		return false // a .git file that names no directory
	}
	for d := dir; d != top; d = filepath.Dir(d) {
		if looksBare(d) {
			return false
		}
		if d == filepath.Dir(d) {
			return true // no repository: git only fails
		}
	}
	if fi, err := os.Lstat(filepath.Join(top, ".git")); err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
		return false
	}
	return plainGitDir(gitDir)
}

// looksBare reports a directory git would take for a bare repository.
func looksBare(d string) bool {
	for _, f := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(d, f)); err != nil {
			return false
		}
	}
	return true
}

// plainGitDir reports whether a git directory's configuration files (its
// own, its worktree's, and its common directory's) hold only plain keys.
func plainGitDir(g string) bool {
	files := []string{filepath.Join(g, "config"), filepath.Join(g, "config.worktree")}
	if c := gitx.CommonDir(g); c != g {
		files = append(files, filepath.Join(c, "config"), filepath.Join(c, "config.worktree"))
	}
	for _, f := range files {
		if !plainGitConfig(f) {
			return false
		}
	}
	return true
}

// plainGitConfig reads one git configuration file (a missing one is
// plain); a line it cannot read makes it not plain.
func plainGitConfig(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return os.IsNotExist(err)
	}
	defer f.Close()
	section, sub := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 || strings.TrimSpace(line[end+1:]) != "" && !strings.HasPrefix(strings.TrimSpace(line[end+1:]), "#") {
				return false
			}
			head := strings.TrimSpace(line[1:end])
			name, rest, has := strings.Cut(head, " ")
			section, sub = strings.ToLower(name), has && strings.TrimSpace(rest) != ""
			if strings.Contains(name, ".") {
				section, sub = strings.ToLower(name[:strings.IndexByte(name, '.')]), true
			}
			continue
		}
		key, _, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if strings.HasSuffix(key, `\`) || strings.ContainsAny(key, " \t\"") {
			return false
		}
		full := section + "." + key
		if sub {
			full = section + ".*." + key
		}
		if !plainGitKeys()[full] {
			return false
		}
	}
	return sc.Err() == nil
}
