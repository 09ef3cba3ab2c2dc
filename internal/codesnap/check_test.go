package codesnap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
)

// TestWorkerNeverFetchesTheSubmittersRemote is issue 23's first case: a
// submission whose remote is an option (`--upload-pack=CMD`) reached the
// worker's git fetch and ran CMD. The worker fetches only from its own
// allowlist, by the repository the snapshot names, and never runs CMD.
func TestWorkerNeverFetchesTheSubmittersRemote(t *testing.T) {
	for _, tc := range []struct {
		name    string
		remotes func(h *hosts) []string
		wantErr string // "" = materialised (from the worker's own remote)
	}{
		{"no allowlist", func(*hosts) []string { return nil }, "fetches from no remote of that repository"},
		{"allowlist names another repository", func(h *hosts) []string { return []string{"/srv/other.git"} }, "fetches from no remote of that repository"},
		{"allowlist names the repository", func(h *hosts) []string { return []string{h.origin} }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHosts(t)
			marker := filepath.Join(t.TempDir(), "MARKER")
			snap, err := codesnap.Capture(t.Context(), h.store, h.repo)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Bundle != nil {
				t.Fatal("the base is pushed: the snapshot should carry no bundle")
			}
			// The hostile submitter's own snapshot.
			snap.Remote = "--upload-pack=:;touch " + marker
			h.cache.Remotes = tc.remotes(h)
			co, err := h.cache.Materialise(t.Context(), h.store, snap, codesnap.Options{ID: "evil"})
			if _, serr := os.Stat(marker); serr == nil {
				t.Fatal("the submitter's --upload-pack ran on the worker")
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("from the worker's own remote: %v", err)
				}
				co.Cleanup()
				return
			}
			if err == nil {
				co.Cleanup()
				t.Fatal("materialised without a bundle or an allowed remote")
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "worker.remotes") || strings.Contains(err.Error(), "upload-pack") {
				t.Fatalf("error %q: want it to say %q and how to allow a remote, without echoing the submitter's", err, tc.wantErr)
			}
		})
	}
}

// TestWorkerRefusesMalformedSnapshots: every field a submitter sets that
// reaches git or a path is checked on the worker, with an error naming it.
func TestWorkerRefusesMalformedSnapshots(t *testing.T) {
	h := newHosts(t)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty\n")
	good, err := codesnap.Capture(t.Context(), h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field string
		edit        func(s *codesnap.Snapshot)
	}{
		{"base as an option", "base", func(s *codesnap.Snapshot) { s.Base = "--upload-pack=touch /tmp/x" }},
		{"base as a revision", "base", func(s *codesnap.Snapshot) { s.Base = "HEAD" }},
		{"base abbreviated", "base", func(s *codesnap.Snapshot) { s.Base = s.Base[:12] }},
		{"base of the other hash", "base", func(s *codesnap.Snapshot) { s.Base = strings.Repeat("ab", 32) }},
		{"tree as an option", "tree", func(s *codesnap.Snapshot) { s.Tree = "--output=/tmp/x" }},
		{"branch as an option", "branch", func(s *codesnap.Snapshot) { s.Branch = "--upload-pack=x" }},
		{"branch with ..", "branch", func(s *codesnap.Snapshot) { s.Branch = "a/../../HEAD" }},
		{"subdir outside", "subdir", func(s *codesnap.Snapshot) { s.Subdir = "../../etc" }},
		{"subdir absolute", "subdir", func(s *codesnap.Snapshot) { s.Subdir = "/etc" }},
		{"object format", "object_format", func(s *codesnap.Snapshot) { s.ObjectFormat = "sha1 --x" }},
		{"patch sha short", "patch", func(s *codesnap.Snapshot) { s.Patch = &blobstore.Ref{Key: "k", SHA256: "ab"} }},
		{"pack sha short", "pack", func(s *codesnap.Snapshot) {
			s.Pack, s.DirtyTree = &blobstore.Ref{Key: "k", SHA256: "ab"}, s.Tree
		}},
		{"pack without its tree", "pack", func(s *codesnap.Snapshot) {
			s.Pack = &blobstore.Ref{Key: "sha256/00/x", SHA256: strings.Repeat("0", 64)}
		}},
		{"dirty tree as an option", "dirty_tree", func(s *codesnap.Snapshot) {
			s.Pack, s.DirtyTree = &blobstore.Ref{Key: "sha256/00/x", SHA256: strings.Repeat("0", 64)}, "--output=/tmp/x"
		}},
		{"bundle key escapes", "bundle", func(s *codesnap.Snapshot) {
			s.Bundle = &blobstore.Ref{Key: "../../x", SHA256: strings.Repeat("0", 64)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := *good
			tc.edit(&s)
			co, err := h.cache.Materialise(t.Context(), h.store, &s, codesnap.Options{ID: "bad"})
			if err == nil {
				co.Cleanup()
				t.Fatal("materialised")
			}
			if !strings.Contains(err.Error(), tc.field) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q does not name %s in one line", err, tc.field)
			}
		})
	}
	t.Run("partial change tree", func(t *testing.T) {
		co, err := h.cache.Materialise(t.Context(), h.store, good, codesnap.Options{ID: "bad", Partial: &codesnap.Result{Tree: "--x"}})
		if err == nil {
			co.Cleanup()
			t.Fatal("materialised")
		}
		if !strings.Contains(err.Error(), "change tree") {
			t.Fatalf("error %q", err)
		}
	})
}

func TestCheckRemote(t *testing.T) {
	for _, tc := range []struct {
		remote string
		ok     bool
	}{
		{"https://github.com/o/r.git", true}, {"ssh://git@host/o/r.git", true}, {"git@github.com:o/r.git", true},
		{"/srv/git/r.git", true}, {"file:///srv/git/r.git", true},
		{"--upload-pack=:;touch x", false}, {"-oProxyCommand=x", false}, {"ext::sh -c x", false}, {"fd::3", false},
		{"ssh://-oProxyCommand=x/r", false}, {"relative/path", false}, {"", false}, {"https://h/r\n", false}, {"ftp://h/r", false},
	} {
		if err := codesnap.CheckRemote(tc.remote); (err == nil) != tc.ok {
			t.Errorf("CheckRemote(%q) = %v", tc.remote, err)
		}
	}
}
