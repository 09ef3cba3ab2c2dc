package temporal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestLargeResultComesBackWhole: a call whose answer is 3 MiB, over
// Temporal's 2 MiB payload limit, comes back whole: worker and submitter
// dial with the claim check over the same store, and only a reference
// travels through the history.
func TestLargeResultComesBackWhole(t *testing.T) {
	srv := sharedServer(t)
	ctx := context.Background()
	store, err := temporal.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dial := func() *temporal.ClientOptions {
		return &temporal.ClientOptions{HostPort: srv.Addr, ClaimStore: store.(*blobstore.Store)}
	}
	wc, err := temporal.Dial(ctx, *dial())
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	sc, err := temporal.Dial(ctx, *dial())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	big := strings.Repeat("0123456789abcdef", 3<<20/16)
	script := "agents:\n  explore:\n    - say: \"" + big + "\"\n"
	q := newQueue(t)
	startWorker(t, wc, q, script, 1, store)
	eng := temporal.New(temporal.Config{Client: sc, Queue: q, Poll: 50 * time.Millisecond, ClaimStore: store.(*blobstore.Store),
		Limits: func(string) temporal.CallLimits { return testLimits }})
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := eng.Call(cctx, call.Spec{Agent: "explore", Prompt: "a big answer"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || !strings.Contains(r.Summary, big) {
		t.Fatalf("status %s, summary of %d bytes; want done with the whole %d-byte answer (%s)", r.Status, len(r.Summary), len(big), r.Error)
	}
}
