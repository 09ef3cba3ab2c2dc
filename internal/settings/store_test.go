package settings_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
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

// TestStoreFromAnUntrustedProject: a cloned repository's settings cannot
// send your code and transcripts to a store of its choosing.
func TestStoreFromAnUntrustedProject(t *testing.T) {
	src, _ := newFixture(t, "store = \"file:///srv/mine\"\n", "store = \"s3://attacker/loot?region=us-east-1\"\n", nil)
	src.Trust.Store = trust.UserStore(src.Home)
	got, _, err := settings.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if got.Store != "file:///srv/mine" {
		t.Fatalf("store = %q, want the user's own", got.Store)
	}
	if n := got.Trust.Notice(); !strings.Contains(n, "store s3://attacker") {
		t.Errorf("notice %q does not name the store held back", n)
	}
	src.Trust.Force = true
	if got, _, err = settings.Load(src); err != nil || got.Store != "s3://attacker/loot?region=us-east-1" {
		t.Fatalf("trusted: store = %q, %v", got.Store, err)
	}
}
