package temporal

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestClaimedRunExpires: a run's activities are admitted for RunLifetime
// after its signing, whether this worker saw it claim (its cache) or
// another did (the store's record), and no longer: a claimed run is no
// run for ever (red team: a run signed 72 hours ago ran), nor one signed
// ahead of the worker's clock (review: one signed ten years ahead ran).
func TestClaimedRunExpires(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	pub, err := GenerateKey(dir, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	key, err := LoadSigner(filepath.Join(dir, PrivateKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	trust := NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	store, err := blobstore.Open(t.Context(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const run = "run-1"
	cases := []struct {
		name   string
		age    time.Duration
		record bool // the store has this run's claim (another worker's)
		cached bool // this worker saw the run claim
		want   string
	}{
		{"claimed elsewhere an hour ago", time.Hour, true, false, ""},
		{"claimed here an hour ago", time.Hour, false, true, ""},
		{"claimed elsewhere 72 hours ago", 72 * time.Hour, true, false, "a run may go on"},
		{"claimed here 72 hours ago", 72 * time.Hour, false, true, "a run may go on"},
		{"unclaimed, signed 25 hours ago", 25 * time.Hour, false, false, "so this is a replay"},
		{"unclaimed, signed a minute ahead", -time.Minute, false, false, ""},
		{"unclaimed, signed ten years ahead", -10 * 365 * 24 * time.Hour, false, false, "from now"},
		{"claimed elsewhere, signed a day ahead", -24 * time.Hour, true, false, "from now"},
		{"claimed here, signed a day ahead", -24 * time.Hour, false, true, "from now"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := call.Spec{Agent: "explore", Prompt: "p", TaskID: dispatch.NewID()}
			s, err := key.Sign(Submission{Kind: "call", Workflow: "W", Queue: "q", Spec: &spec, At: time.Now().Add(-tc.age)})
			if err != nil {
				t.Fatal(err)
			}
			a := &Activities{Store: store, Trust: trust}
			if tc.record {
				if _, err := store.Put(t.Context(), claimKey(s), strings.NewReader(run)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.cached {
				a.claimed.Store(claimKey(s)+" "+run, time.Now().Add(-tc.age))
			}
			err = a.claim(t.Context(), s, run)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want refused saying %q", err, tc.want)
			}
		})
	}
}
