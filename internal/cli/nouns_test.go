package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// TestNounNames: each noun answers to the name Run looks it up by, and a
// root built for one noun shows that noun's help as the whole tree does
// (its flags, the root's persistent ones, its own commands); an argument
// list that does not start with a noun gets the whole tree.
func TestNounNames(t *testing.T) {
	full := NewCmdRoot(&cmdutil.Factory{})
	for _, n := range nouns(&cmdutil.Factory{}, "v") {
		if got := n.build().Name(); got != n.name {
			t.Errorf("noun %q builds %q", n.name, got)
		}
		if got := nounFor([]string{n.name, "x"}); got != n.name {
			t.Errorf("nounFor(%s ...) = %q", n.name, got)
		}
		lazy := newCmdRoot(&cmdutil.Factory{}, n.name)
		if len(lazy.Commands()) != 1 {
			t.Errorf("the root for %s has %d commands", n.name, len(lazy.Commands()))
		}
		if a, b := usage(t, lazy, n.name), usage(t, full, n.name); a != b || !strings.Contains(a, "Usage:") {
			t.Errorf("brood %s --help differs on a root built for it:\n%s\nthe whole tree's:\n%s", n.name, a, b)
		}
	}
	for _, args := range [][]string{nil, {"-p", "hi"}, {"help", "run"}, {"completion", "bash"}, {"runn"}, {"--model", "x", "run"}} {
		if got := nounFor(args); got != "" {
			t.Errorf("nounFor(%q) = %q, want the whole tree", args, got)
		}
	}
}

// usage is the help of root's command name as `brood NAME --help` shows
// its flags and commands.
func usage(t *testing.T, root *cobra.Command, name string) string {
	t.Helper()
	cmd, _, err := root.Find([]string{name})
	if err != nil || cmd.Name() != name {
		t.Fatalf("find %s: %v", name, err)
	}
	var b bytes.Buffer
	cmd.SetOut(&b)
	cmd.SetErr(&b)
	if err := cmd.Help(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
