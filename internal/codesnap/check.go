package codesnap

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/gitx"
)

// A Snapshot, a Result and a Change reach a worker from a submitter, who
// is hostile: they are checked on the worker before any of their values
// reaches git or the file system (the checks in Capture run in the
// submitter's own process, which a hostile submitter does not run).
// Object ids must be full ids of the snapshot's hash, the branch a name
// git accepts, the subdirectory local, the store refs well formed; the
// remote a submission names is never fetched from (Cache.Remotes).

// Check reports the first field of s a worker must not use, as a one-line
// error naming it.
func (s *Snapshot) Check() error {
	if s == nil {
		return errors.New("codesnap: the call names no snapshot")
	}
	idLen := 40
	switch s.ObjectFormat {
	case "", "sha1":
	case "sha256":
		idLen = 64
	default:
		return fmt.Errorf("codesnap: snapshot object_format %q is neither sha1 nor sha256", clip(s.ObjectFormat))
	}
	id := func(field, v string, optional bool) error {
		if v == "" && optional {
			return nil
		}
		if err := gitx.ObjectID("codesnap: snapshot "+field, v); err != nil {
			return err
		}
		if len(v) != idLen {
			return fmt.Errorf("codesnap: snapshot %s %q is not a %s object id", field, clip(v), s.format())
		}
		return nil
	}
	if err := id("tree", s.Tree, false); err != nil {
		return err
	}
	if err := id("base", s.Base, true); err != nil {
		return err
	}
	if err := id("dirty_tree", s.DirtyTree, true); err != nil {
		return err
	}
	if (s.Pack == nil) != (s.DirtyTree == "") || (s.Pack != nil && s.Patch != nil) {
		return errors.New("codesnap: snapshot has a pack without its dirty tree, a dirty tree without its pack, or both a pack and a patch")
	}
	if err := s.checkPackChain(id); err != nil {
		return err
	}
	if s.Branch != "" {
		if err := gitx.BranchName("codesnap: snapshot branch", s.Branch); err != nil {
			return err
		}
	}
	if s.Subdir != "" && (!filepath.IsLocal(filepath.FromSlash(s.Subdir)) || strings.ContainsAny(s.Subdir, "\\\x00")) {
		return fmt.Errorf("codesnap: snapshot subdir %q is not a path inside the repository", clip(s.Subdir))
	}
	if len(s.Repo) > 2048 || strings.ContainsAny(s.Repo, "\x00\n") {
		return fmt.Errorf("codesnap: snapshot repo %q is not a repository name", clip(s.Repo))
	}
	if len(s.Excludes) > 2<<20 {
		return errors.New("codesnap: snapshot excludes: over 2 MiB of ignore rules")
	}
	if s.Base == "" && s.Bundle != nil {
		return errors.New("codesnap: snapshot has a bundle but no base commit")
	}
	for _, r := range []struct {
		field string
		ref   *blobstore.Ref
	}{{"patch", s.Patch}, {"pack", s.Pack}, {"bundle", s.Bundle}} {
		if err := checkRef("snapshot "+r.field, r.ref); err != nil {
			return err
		}
	}
	if len(s.Layers) > maxLayers {
		return fmt.Errorf("codesnap: snapshot has %d layers, over %d", len(s.Layers), maxLayers)
	}
	for i, l := range s.Layers {
		if l == nil {
			return fmt.Errorf("codesnap: snapshot layer %d is empty", i)
		}
		if err := checkRef(fmt.Sprintf("snapshot layer %d", i), l); err != nil {
			return err
		}
	}
	return nil
}

func (s *Snapshot) format() string {
	if s.ObjectFormat == "" {
		return "sha1"
	}
	return s.ObjectFormat
}

// Check reports the first field of a change (a call's result, an earlier
// attempt's partial change) a worker must not use.
func (r *Result) Check() error {
	if r == nil {
		return nil
	}
	if err := gitx.ObjectID("codesnap: change tree", r.Tree); err != nil {
		return err
	}
	return checkRef("change patch", r.Patch)
}

// checkRef: a store reference names a key and a full SHA-256.
func checkRef(field string, r *blobstore.Ref) error {
	if r == nil {
		return nil
	}
	if r.Key == "" || r.Size < 0 || len(r.SHA256) != 64 || !isHex(r.SHA256) || strings.ContainsAny(r.Key, "\x00\n\\") || strings.Contains(r.Key, "..") {
		return fmt.Errorf("codesnap: %s %q is not a store reference (key, size, 64 hex digits of SHA-256)", field, clip(r.Key))
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// CheckRemote reports whether a worker may be configured to fetch from
// remote: an ssh, https, http or file URL, an scp-like user@host:path, or
// an absolute path — never an option (a leading "-"), a transport helper
// ("ext::", "fd::", any "X::"), or a URL with control characters.
func CheckRemote(remote string) error {
	bad := func(why string) error {
		return fmt.Errorf("remote %q: %s (give an ssh://, https://, file:// URL, user@host:path or an absolute path)", clip(remote), why)
	}
	switch {
	case remote == "":
		return bad("empty")
	case strings.HasPrefix(remote, "-"):
		return bad("starts with '-' (git would read it as an option)")
	case strings.Contains(remote, "::"):
		return bad("a transport helper URL runs a program")
	case strings.ContainsFunc(remote, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("control characters")
	}
	if u, err := url.Parse(remote); err == nil && len(u.Scheme) > 1 {
		switch u.Scheme {
		case "ssh", "git+ssh", "ssh+git", "https", "http", "file":
			if strings.HasPrefix(u.Host, "-") || strings.HasPrefix(u.User.Username(), "-") {
				return bad("a host or user starting with '-'")
			}
			return nil
		}
		return bad("scheme " + u.Scheme + " is not allowed")
	}
	if filepath.IsAbs(remote) {
		return nil
	}
	if i := strings.Index(remote, ":"); i > 0 && !strings.Contains(remote[:i], "/") {
		return nil // scp-like user@host:path
	}
	return bad("not a URL nor an absolute path")
}

// allowedRemote is the worker's own URL for the snapshot's repository:
// the first of its allowlist that names the same repository (repoID); ""
// when none does. The snapshot's Remote is never returned.
func (c *Cache) allowedRemote(snap *Snapshot) string {
	for _, r := range c.Remotes {
		if CheckRemote(r) == nil && snap.Repo != "" && repoID(r) == snap.Repo {
			return r
		}
	}
	return ""
}
