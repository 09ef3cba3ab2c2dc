package settings

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/trust"
)

// OwnLocal reports whether something other than the repository vouches
// for a local file's content (rel project-relative, data as read): brood
// wrote it for this user (OwnLocalRecorded), Claude Code's folder trust
// covers it (trust.ClaudeTrustsFolder), or, in a subagent, the root found
// it so (trust.Grant.OwnsLocal). nil vouches for nothing.
type OwnLocal func(rel string, data []byte) bool

// RootOwnLocal is the root's OwnLocal for the project at root, with the
// user's home: a file brood wrote as it is now (the ledger), or a file
// under .claude/ in a folder Claude Code trusts (Claude Code honours its
// own local file there; .brood/ is brood's alone).
func RootOwnLocal(root, home string) OwnLocal {
	return func(rel string, data []byte) bool {
		if OwnLocalRecorded(root, rel, data) {
			return true
		}
		return strings.HasPrefix(path.Clean(filepath.ToSlash(rel)), ".claude/") && trust.ClaudeTrustsFolder(home, root)
	}
}

// PersonalNeedsTrust decides for a person's own project file
// (.brood/settings.local.toml, .claude/settings.local.json: their own
// answers such as "always allow"): it is honoured without trust only when
// something other than the repository vouches for its content (own: brood
// wrote it, or Claude Code trusts the folder) and nothing the repository
// ships stands in its way. Git alone does not vouch: an archive or a
// download that ships its own .git, the local file untracked or
// gitignored in it, would pass (review42 P1-2). Any other local file goes
// through the gate like a committed one, its content in the grant's key.
//
// git's checks still refuse: a file git tracks came with the repository.
// git does not look through a tracked symbolic link or into a submodule,
// so a repository that commits `.claude -> cfg` with cfg/settings.local.json,
// or makes .claude or .brood a submodule holding the file, would have it
// read as untracked (review 18, X1). The file is the person's only when no
// component of rel below root is a symbolic link, it is a regular file, no
// directory on its way is a gitlink or symbolic link in the index, and it
// belongs to root's repository (not a nested one).
func PersonalNeedsTrust(ctx context.Context, root, rel string, own OwnLocal) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	if !filepath.IsLocal(filepath.FromSlash(rel)) || !plainBelow(root, rel) {
		return true
	}
	if shippedByGit(ctx, root, rel) || otherRepository(root, rel) {
		return true
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return false // nothing to honour
	}
	return err != nil || own == nil || !own(rel, data)
}

// shippedByGit reports whether git says rel came with the repository: it
// is tracked, or a directory on its way is a gitlink or a link in the
// index. Outside a work tree git says nothing of it.
func shippedByGit(ctx context.Context, root, rel string) bool {
	// The repository is not trusted here: gitx runs none of its programs.
	// -s lists the file if tracked, and the entry of each directory on its
	// way that is a gitlink (160000) or a link (120000).
	ancestors := parents(rel)
	out, err := gitx.Run(ctx, root, append([]string{"ls-files", "-s", "-z", "--", rel}, ancestors...)...)
	if err != nil {
		return false // 128: not a work tree; the content's voucher decides
	}
	for _, line := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if p == rel {
			return true // tracked
		}
		if mode, _, _ := strings.Cut(meta, " "); (mode == "160000" || mode == "120000") && slices.Contains(ancestors, p) {
			return true
		}
	}
	return false
}

// plainBelow reports whether no component of rel below root is a symbolic
// link (nor anything but a directory on the way) and rel is a regular
// file. An absent file is plain: there is nothing to honour.
func plainBelow(root, rel string) bool {
	parts := strings.Split(rel, "/")
	cur := root
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if err != nil {
			return false
		}
		if i == len(parts)-1 {
			return fi.Mode().IsRegular()
		}
		if !fi.IsDir() {
			return false
		}
	}
	return true
}

// otherRepository reports whether a directory on rel's way below root
// holds a .git (a submodule's file or a nested clone's directory): the
// file is then another repository's, which git from root does not see.
func otherRepository(root, rel string) bool {
	for _, d := range parents(rel) {
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d), ".git"))
		if !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// parents are rel's directories below the root, outermost first.
func parents(rel string) []string {
	var out []string
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}
