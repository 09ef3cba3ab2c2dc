package temporal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestOpenStoreRefusesAMissingDirectory: a file store whose directory is
// missing (an unmounted share) is refused with what to do, and not made.
func TestOpenStoreRefusesAMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, url, err string
	}{
		{"existing", "file://" + dir, ""},
		{"missing", "file://" + filepath.Join(dir, "nostore"), "does not exist: create it"},
		{"missing parent", "file://" + filepath.Join(dir, "no", "store"), "does not exist: create it"},
		{"the default, made", "file://" + filepath.Join(dir, "home", ".cache", "brood", "fleet-store"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := temporal.OpenStore(t.Context(), tc.url)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("open %s: %v; want %q", tc.url, err, tc.err)
			}
			if _, serr := os.Stat(strings.TrimPrefix(tc.url, "file://")); !os.IsNotExist(serr) {
				t.Errorf("the missing directory was made (%v)", serr)
			}
		})
	}
}

// TestUnsignedIsSaid: a submitter without a fleet key is told that its
// submissions go out unsigned and what makes a key; one with a key is not.
func TestUnsignedIsSaid(t *testing.T) {
	s, _ := newKey(t)
	cases := []struct {
		name   string
		signer *temporal.Signer
		want   string
	}{
		{"no key", nil, "brood fleet keygen"},
		{"a key", s, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := temporal.New(temporal.Config{Signer: tc.signer}).Unsigned()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("Unsigned() = %q; want %q", got, tc.want)
			}
		})
	}
}
