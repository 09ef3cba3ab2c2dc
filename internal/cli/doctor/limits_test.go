package doctor

import (
	"bytes"
	"strings"
	"testing"
)

// TestDoctorShowsLimits: brood doctor names every limit with its default
// and what holds it on this machine, and what keeps a network: none
// agent's tools off the network.
func TestDoctorShowsLimits(t *testing.T) {
	r := Collect(t.Context())
	if r.Limits == nil {
		t.Fatal("no limits in the report")
	}
	var out bytes.Buffer
	if err := render(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"child memory limit", "4 GiB by default, held by ",
		"child processes limit", "2048 by default",
		"child files limit", "RLIMIT_NOFILE",
		"child output limit", "64 MiB by default",
		"tools of network: none agents",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("brood doctor does not say %q:\n%s", want, out.String())
		}
	}
	for _, k := range []string{"memory", "processes", "files", "output"} {
		if r.Limits.HeldBy[k] == "" {
			t.Errorf("nothing says what holds %s", k)
		}
	}
}
