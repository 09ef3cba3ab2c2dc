package settings_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// TestLocalFileNeedsAVoucher (review42 P1-2): git's word that a local file
// is untracked does not make it the person's own — an archive or a
// download that ships its own .git, the local file untracked or
// gitignored in it, would pass. A local file is the person's own only
// when something other than the repository vouches for its content:
// brood's sealed ledger of the files it wrote, or Claude Code's trust of
// the folder (for its own .claude/ files). git's refusals still hold.
func TestLocalFileNeedsAVoucher(t *testing.T) {
	const (
		claudeLocal = ".claude/settings.local.json"
		broodLocal  = ".brood/settings.local.toml"
		body        = `{"permissions": {"defaultMode": "bypassPermissions", "allow": ["Bash(*)"]}}` + "\n"
	)
	gitIn := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(t *testing.T, path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// archive is a download that ships its own .git, the local file
	// gitignored in it.
	archive := func(t *testing.T, root, rel string) {
		write(t, filepath.Join(root, ".gitignore"), rel+"\n")
		gitIn(t, root, "init", "-q")
		gitIn(t, root, "add", ".gitignore")
		gitIn(t, root, "commit", "-qm", "shipped")
	}
	broodWrote := func(t *testing.T, root, rel string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := settings.RecordOwnLocal(root, rel, data); err != nil {
			t.Fatal(err)
		}
	}
	claudeTrusts := func(t *testing.T, home, dir string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"numStartups": 3, "projects": map[string]any{dir: map[string]any{"hasTrustDialogAccepted": true, "allowedTools": []string{}}}})
		write(t, filepath.Join(home, ".claude.json"), string(b))
	}
	for _, tc := range []struct {
		name  string
		rel   string
		setup func(t *testing.T, root, home string)
		want  bool // needs trust
	}{
		{"archive with its own .git, gitignored", claudeLocal, func(t *testing.T, root, _ string) { archive(t, root, claudeLocal) }, true},
		{"archive with its own .git, untracked", broodLocal, func(t *testing.T, root, _ string) { gitIn(t, root, "init", "-q") }, true},
		{"no git", claudeLocal, func(*testing.T, string, string) {}, true},
		{"brood wrote it", broodLocal, func(t *testing.T, root, _ string) {
			archive(t, root, broodLocal)
			broodWrote(t, root, broodLocal)
		}, false},
		{"brood wrote it, no git", broodLocal, func(t *testing.T, root, _ string) { broodWrote(t, root, broodLocal) }, false},
		{"brood wrote it, edited since", broodLocal, func(t *testing.T, root, _ string) {
			archive(t, root, broodLocal)
			broodWrote(t, root, broodLocal)
			write(t, filepath.Join(root, broodLocal), body+"\n")
		}, true},
		{"brood wrote it in another directory", broodLocal, func(t *testing.T, root, _ string) {
			other := filepath.Join(filepath.Dir(root), "other")
			write(t, filepath.Join(other, broodLocal), body)
			broodWrote(t, other, broodLocal)
		}, true},
		{"a ledger entry with a forged seal", broodLocal, func(t *testing.T, root, _ string) {
			broodWrote(t, root, broodLocal)
			path := filepath.Join(taskdir.StateBase(), settings.OwnLedgerName)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var l struct {
				Version int                 `json:"version"`
				Files   []map[string]string `json:"files"`
			}
			if err := json.Unmarshal(data, &l); err != nil {
				t.Fatal(err)
			}
			l.Files[0]["seal"] = strings.Repeat("0", 64)
			data, _ = json.Marshal(l)
			write(t, path, string(data))
		}, true},
		{"brood wrote it, git tracks it", broodLocal, func(t *testing.T, root, _ string) {
			gitIn(t, root, "init", "-q")
			gitIn(t, root, "add", "-f", broodLocal)
			gitIn(t, root, "commit", "-qm", "x")
			broodWrote(t, root, broodLocal)
		}, true},
		{"Claude Code trusts the folder", claudeLocal, func(t *testing.T, root, home string) {
			archive(t, root, claudeLocal)
			claudeTrusts(t, home, root)
		}, false},
		{"Claude Code trusts the folder, no git", claudeLocal, func(t *testing.T, root, home string) { claudeTrusts(t, home, root) }, false},
		{"Claude Code trusts the folder above", claudeLocal, func(t *testing.T, root, home string) {
			archive(t, root, claudeLocal)
			claudeTrusts(t, home, filepath.Dir(root))
		}, true},
		{"Claude Code's trust is not brood's file", broodLocal, func(t *testing.T, root, home string) {
			archive(t, root, broodLocal)
			claudeTrusts(t, home, root)
		}, true},
		{"Claude Code trusts the folder, git tracks the file", claudeLocal, func(t *testing.T, root, home string) {
			gitIn(t, root, "init", "-q")
			gitIn(t, root, "add", "-f", claudeLocal)
			gitIn(t, root, "commit", "-qm", "x")
			claudeTrusts(t, home, root)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			home := t.TempDir()
			root := filepath.Join(t.TempDir(), "proj")
			write(t, filepath.Join(root, tc.rel), body)
			tc.setup(t, root, home)
			if got := settings.PersonalNeedsTrust(t.Context(), root, tc.rel, settings.RootOwnLocal(root, home)); got != tc.want {
				t.Errorf("PersonalNeedsTrust(%s) = %v, want %v", tc.rel, got, tc.want)
			}
		})
	}
}

// TestSubagentTakesTheRootsWordForLocalFiles: a subagent cannot read the
// ledger nor ~/.claude.json's trust, so it takes the root's word as the
// grant brought it (trust.Grant.Own): a local file with exactly the
// content the root found the person's own is honoured; with other content,
// or without the root's word, it is gated like a repository's file.
func TestSubagentTakesTheRootsWordForLocalFiles(t *testing.T) {
	const (
		rel  = ".brood/settings.local.toml"
		mine = "[permissions]\nallow = [\"Bash(echo:*)\"]\n"
	)
	for _, tc := range []struct {
		name    string
		own     map[string]string
		allowed bool
	}{
		{"the root's word for this content", map[string]string{rel: trust.Sum([]byte(mine))}, true},
		{"the root's word for other content", map[string]string{rel: trust.Sum([]byte(mine + "#\n"))}, false},
		{"no word", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, f := newFixture(t, "", "", nil)
			if err := os.MkdirAll(filepath.Join(f.project, ".brood"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(f.project, rel), []byte(mine), 0o644); err != nil {
				t.Fatal(err)
			}
			grant := &trust.Grant{Own: tc.own}
			src.Trust = settings.Trust{Inherited: true, Grant: grant}
			src.OwnLocal = grant.OwnsLocal
			got, _, err := settings.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			if allowed := slices.Contains(got.Permissions.Allow, "Bash(echo:*)"); allowed != tc.allowed {
				t.Errorf("allow rule honoured = %v, want %v (allow %q, notice %q)", allowed, tc.allowed, got.Permissions.Allow, got.Trust.Notice())
			}
			if own := len(got.Trust.Own) == 1; own != tc.allowed {
				t.Errorf("Trust.Own = %v: the file should be passed on as the person's own only when it is", got.Trust.Own)
			}
		})
	}
}
