package temporal

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestSentStartsOfTwoWritersAtOnce: two calls of one checkout (two brood
// sessions, a follow-up beside a resume) keep their starts of one task at
// the same time: every start and its run is in sent.json after, none lost
// to the other's read-modify-write (sent.lock).
func TestSentStartsOfTwoWritersAtOnce(t *testing.T) {
	const task, writers, each = "01JAAAAAAAAAAAAAAAAAAAAAAA", 2, 25
	ctx := context.Background()
	repo, state := recordsRepo(t)
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		// An engine each: two processes' worth of opens of the record.
		e := &Engine{cfg: Config{Namespace: "ns", Code: &CodeConfig{Dir: repo}}}
		wg.Go(func() {
			for i := range each {
				in := CallInputW{Spec: call.Spec{Prompt: fmt.Sprintf("writer %d start %d", w, i)}}
				if err := e.keepSent(ctx, task, in); err != nil {
					errs <- err
					return
				}
				e.keepRun(ctx, task, in, fmt.Sprintf("run-%d-%d", w, i))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var rec sentRecord
	if err := taskdir.ReadStateJSON(filepath.Join(state, "fleet", task, "sent.json"), maxRecord, &rec); err != nil {
		t.Fatal(err)
	}
	var lost []string
	for w := range writers {
		for i := range each {
			in := CallInputW{Spec: call.Spec{Prompt: fmt.Sprintf("writer %d start %d", w, i)}}
			d := inputDigest(in)
			if !slices.Contains(rec.Inputs, d) || !slices.Contains(rec.runsOf(d), fmt.Sprintf("run-%d-%d", w, i)) {
				lost = append(lost, in.Spec.Prompt)
			}
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d starts (or their runs) lost from sent.json: %v", len(lost), writers*each, lost)
	}
}
