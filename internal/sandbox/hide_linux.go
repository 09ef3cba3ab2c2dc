package sandbox

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// hiddenEnv carries a policy's Hidden list from the parent to a child that
// adds its own file-system layer (a base domain): set by HiddenEnv, read
// and removed by Restrict before anything else runs.
const hiddenEnv = "BROOD_SANDBOX_HIDDEN"

// HiddenEnv is the environment entry that passes p.Hidden to a child that
// calls Restrict on a base domain (BaseForChild), "" when p hides nothing.
func HiddenEnv(p Policy) string {
	if len(p.Hidden) == 0 {
		return ""
	}
	b, _ := json.Marshal(p.Hidden)
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
	return allowAround(rfd, "/", hide, way, access)
}

// allowAround adds the rules for one directory on the way to a hidden path.
func allowAround(rfd int, dir string, hide, way map[string]bool, access uint64) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case hide[p] || e.Type()&os.ModeSymlink != 0:
		case way[p]:
			if err := allowAround(rfd, p, hide, way, access); err != nil {
				return err
			}
		default:
			// (An entry gone since the listing, or one this user may not
			// reach, needs no rule.)
			if err := addPathRule(rfd, p, access); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
				return err
			}
		}
	}
	return nil
}
