package cli_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// TestEveryCommandHasAnExample walks the whole command tree: every command
// a person can run (not hidden, runnable or a group) shows an example of
// running brood in its --help (#28 item 9: 20
// of 29 had none).
func TestEveryCommandHasAnExample(t *testing.T) {
	root := cli.NewCmdRoot(&cmdutil.Factory{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" && c != root {
				continue
			}
			walk(sub)
		}
		if c.Hidden || strings.HasPrefix(c.Name(), "__") {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
			return
		}
		if !strings.Contains(c.Example, "brood") {
			t.Errorf("%s: its example never runs brood:\n%s", c.CommandPath(), c.Example)
		}
	}
	walk(root)
}
