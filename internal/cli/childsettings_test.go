package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/trust"
)

// TestChildSettingsUnderTheRootsGrant: a child that delegates reads its
// settings under the root's trust decision (the envelope's grant) and no
// other, even where its command tree read them already under its own
// reading (a child command line with more than the protocol's flags,
// BROOD_CHILD_ARGS: --trust-project here). A project's raised pool
// concurrency is gated by trust: the root trusted nothing.
func TestChildSettingsUnderTheRootsGrant(t *testing.T) {
	root := t.TempDir()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".brood"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".brood", "settings.toml"), []byte("[pool]\nconcurrency = 99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, tc := range []struct {
		name  string
		grant *trust.Grant
		want  int
	}{
		{"the root trusted nothing", &trust.Grant{}, 5},
		{"the root trusted all", &trust.Grant{All: true}, 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			f := cmdutil.NewFactory(cmdutil.IO{Out: &bytes.Buffer{}, Err: &errb, Getenv: func(k string) string {
				if k == "HOME" {
					return home
				}
				return ""
			}})
			f.TrustProject = true // the command tree's own reading: trusted
			if err := f.Load(); err != nil {
				t.Fatal(err)
			}
			if f.Settings.Pool.Concurrency != 99 {
				t.Fatalf("the command tree's reading: concurrency %d, want 99 (trusted by --trust-project)", f.Settings.Pool.Concurrency)
			}
			s := childSetup(f)
			got, err := s.Config.LoadSettings(tc.grant, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Pool.Concurrency != tc.want {
				t.Errorf("the child's settings under the root's grant: concurrency %d, want %d (%s)", got.Pool.Concurrency, tc.want, strings.TrimSpace(errb.String()))
			}
		})
	}
}
