package settings_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
)

func TestLimitsSettings(t *testing.T) {
	for _, c := range []struct {
		name, user, project string
		force               bool // the project is trusted
		want                limits.Set
		err, notice         string
	}{
		{"defaults", "", "", false, limits.Defaults(), "", ""},
		{"user sets", "[limits]\nmemory = \"2GiB\"\nprocesses = 512\nfiles = \"unlimited\"\n", "", false,
			limits.Defaults().Over(limits.Set{Memory: 2 << 30, Processes: 512, Files: limits.Unlimited}), "", ""},
		{"project lowers untrusted", "", "[limits]\nmemory = \"1GiB\"\n", false, limits.Defaults().Over(limits.Set{Memory: 1 << 30}), "", ""},
		{"project raise held back", "", "[limits]\nmemory = \"64GiB\"\nprocesses = \"unlimited\"\n", false, limits.Defaults(), "", "limits.memory 64 GiB; limits.processes unlimited"},
		{"project raise trusted", "", "[limits]\nmemory = \"64GiB\"\n", true, limits.Defaults().Over(limits.Set{Memory: 64 << 30}), "", ""},
		{"bad value names the key and file", "[limits]\nmemory = \"lots\"\n", "", false, limits.Set{}, "setting limits.memory", ""},
		{"bad type", "[limits]\nprocesses = 1.5\n", "", false, limits.Set{}, "settings.toml:2: [limits]: 1.5 is neither", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, _ := newFixture(t, c.user, c.project, nil)
			src.Trust.Store = trust.UserStore(src.Home)
			src.Trust.Force = c.force
			s, _, err := settings.Load(src)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("want an error with %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Limits.Child()
			if err != nil || got != c.want {
				t.Errorf("limits = %+v, %v; want %+v", got, err, c.want)
			}
			if n := s.Trust.Notice(); c.notice != "" && !strings.Contains(n, c.notice) {
				t.Errorf("notice %q does not say %q", n, c.notice)
			}
		})
	}
}
