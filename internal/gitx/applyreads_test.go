package gitx_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/gitx"
)

// TestApplyThatOnlyReads: `git apply` runs no driver only when it only
// reads the patch; an option git would take as applying it, spelled in
// full or abbreviated, keeps the safety overrides (review30 P3-1).
func TestApplyThatOnlyReads(t *testing.T) {
	for _, tc := range []struct {
		args    string
		drivers bool
	}{
		{"apply --numstat -z --whitespace=nowarn", false},
		{"apply -R --numstat -z --whitespace=nowarn", false},
		{"apply --summary -p1 -C3 patch.diff", false},
		{"apply --stat -", false},
		{"apply --cached --whitespace=nowarn x.patch", true},
		{"apply --numstat --check -R", true},
		{"apply --numstat --app", true},
		{"apply --numstat --che", true},
		{"apply --numstat --ind", true},
		{"apply --numstat --3", true},
		{"apply --numstat -- --apply", true},
		{"apply x.patch", true},
		{"apply --numstat --build-fake-ancestor=idx", true},
	} {
		if got := gitx.MayRunDrivers(strings.Fields(tc.args)); got != tc.drivers {
			t.Errorf("git %s: may run drivers %v, want %v", tc.args, got, tc.drivers)
		}
	}
}
