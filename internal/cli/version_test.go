package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/version"
)

// TestVersionFlag: brood --version and -v print "brood VERSION" and exit 0
// (as cobra printed it with brood's version template), and the
// root's help lists the flag as cobra's did; another command has none.
func TestVersionFlag(t *testing.T) {
	want := "brood " + version.String(Version) + "\n"
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--version"}, 0, want},
		{[]string{"-v"}, 0, want},
		{[]string{"--help"}, 0, "  -v, --version"},
		{[]string{"trust", "--version"}, 2, ""},
	} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		io := IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string {
			if k == "HOME" {
				return dir
			}
			return ""
		}}
		code := Run(context.Background(), io, tc.args, Links())
		if code != tc.code || (tc.code == 0 && !strings.Contains(out.String(), tc.out)) || (tc.out == want && out.String() != want) {
			t.Errorf("brood %v: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.out)
		}
	}
}
