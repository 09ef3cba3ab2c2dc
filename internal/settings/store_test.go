package settings_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/settings"
)

func TestStoreSetting(t *testing.T) {
	tests := []struct {
		name, user string
		env        map[string]string
		want, err  string
	}{
		{name: "unset", want: ""},
		{name: "user file", user: "store = \"s3://team-bucket/brood?region=eu-west-1\"\n", want: "s3://team-bucket/brood?region=eu-west-1"},
		{name: "env over file", user: "store = \"file:///a\"\n", env: map[string]string{"BROOD_STORE": "file:///b"}, want: "file:///b"},
		{name: "relative file", user: "store = \"file://shared/x\"\n", err: "file:///absolute/path"},
		{name: "no bucket", env: map[string]string{"BROOD_STORE": "s3:///x"}, err: "s3://bucket/prefix"},
		{name: "unknown scheme", user: "store = \"/plain/path\"\n", err: "use file:///shared/path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newFixture(t, tc.user, "", tc.env)
			s, _, err := settings.Load(src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "setting store") {
					t.Fatalf("Load = %v; want an error naming the store setting and %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Store != tc.want {
				t.Fatalf("store = %q, want %q", s.Store, tc.want)
			}
		})
	}
}
