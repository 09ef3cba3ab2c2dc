package isolate

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// credentialStores are the places, relative to the home directory, where
// the user's tools keep credentials: no child reads them (a hostile
// repository's prompt injection would put them in a transcript, a result
// or, on a fleet worker, the store). A path that does not exist is hidden
// all the same: the directory above it is then on the way to a hidden
// path, and an entry made in such a directory after the child started is
// not readable to it (sandbox.addReadRules).
func credentialStores() []string {
	return []string{
		".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker",
		".config/gcloud", ".config/gh", ".config/hub", ".config/op",
		".config/git/credentials", ".git-credentials", ".netrc", ".pgpass",
		".npmrc", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
		".terraform.d/credentials.tfrc.json", ".vault-token", ".password-store",
		".local/share/keyrings", ".claude/.credentials.json", ".codex/auth.json",
		".config/brood",
	}
}

// broodConfigReadable are the entries of ~/.config/brood a child that
// delegates reads (its agents, the user's settings and trust records, to
// start its own children as the root would): every other one (the fleet's
// signing key, the MCP server tokens, anything the user keeps there) stays
// hidden from it; a child that does not delegate reads none of them.
func broodConfigReadable() []string { return []string{"agents", "settings.toml", "trust.json"} }

// DefaultHidden are the paths no child reads on this machine, by their
// real paths: the credential stores under home (credentialStores), all of
// ~/.config/brood, and the fleet worker's cache (cacheDir: its clones,
// copies and other calls' jobs). A fleet worker's code may call it for the
// list it keeps from its children.
func DefaultHidden(home, cacheDir string) []string {
	var out []string
	if home != "" && filepath.IsAbs(home) {
		for _, rel := range credentialStores() {
			out = append(out, realPath(filepath.Join(home, filepath.FromSlash(rel))))
		}
	}
	if cacheDir != "" && filepath.IsAbs(cacheDir) {
		out = append(out, realPath(filepath.Join(cacheDir, "brood", "fleet")))
	}
	return out
}

// defaultHidden is DefaultHidden for this process's home and cache.
func defaultHidden() []string {
	home, _ := os.UserHomeDir()
	cache, _ := os.UserCacheDir()
	return DefaultHidden(home, cache)
}

// realPath is p with the links of its longest existing prefix resolved
// (a ~/.config linked into a dotfiles repository is hidden where it
// lives: the sandbox builds no rule on a link); the rest is kept as it is.
func realPath(p string) string {
	dir, rest := p, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
	}
}

// hideAround is hidden with every path that holds one of keep (a path the
// child must still read: its tree, its task directory) replaced by its
// entries but the ones on the way to keep, recursively: what is beside
// keep stays hidden, keep itself does not (a hidden path beneath a kept
// one stays hidden: ~/.ssh in a tree that is the home). An entry made later in a
// directory so split is not readable (sandbox.addReadRules). A directory
// that cannot be listed is hidden whole, with what it holds.
func hideAround(hidden, keep []string) []string {
	var out []string
	for _, h := range hidden {
		out = append(out, splitAround(filepath.Clean(h), keep, 0)...)
	}
	return out
}

// maxSplitDepth bounds splitAround's recursion (keep paths are at most a
// few levels beneath a hidden one).
const maxSplitDepth = 16

func splitAround(h string, keep []string, depth int) []string {
	var inside []string
	for _, k := range keep {
		k = filepath.Clean(k)
		if k == h {
			return nil
		}
		if beneath(h, k) {
			inside = append(inside, k)
		}
	}
	if len(inside) == 0 || depth >= maxSplitDepth {
		return []string{h}
	}
	ents, err := os.ReadDir(h)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing there to hide but what keep names
	} else if err != nil {
		return []string{h} // not listed, so hidden whole, keep with it
	}
	var out []string
	for _, e := range ents {
		out = append(out, splitAround(filepath.Join(h, e.Name()), inside, depth+1)...)
	}
	return out
}

// fleetAlternates are the object directories the git repository holding
// dir (it or one of its parents) borrows from in the fleet worker's cache
// (its objects/info/alternates, as a worker's copy has): its child's git
// reads them, so they are kept readable beneath the hidden cache. Only
// those beneath the cache: an alternates file a repository's earlier
// writer planted must not make a credential store readable.
func fleetAlternates(dir string) []string {
	cache, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return nil
	}
	fleet := realPath(filepath.Join(cache, "brood", "fleet"))
	if !beneath(fleet, dir) {
		return nil
	}
	for d := dir; beneath(fleet, d) && d != fleet; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, ".git", "objects", "info", "alternates"))
		if err != nil || len(data) > 1<<16 {
			continue
		}
		var out []string
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			l := strings.TrimSpace(sc.Text())
			if filepath.IsAbs(l) && beneath(fleet, Resolved(l)) && !slices.Contains(out, l) {
				out = append(out, Resolved(l))
			}
		}
		return out
	}
	return nil
}
