package temporal

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/broodhq/brood/internal/blobstore"
)

// TestNamedAnswerTakenOnlySigned: a final answer named in the store
// (answername.go) is created once, and a retry continues from it only
// when a worker key it trusts signed it for an earlier attempt of this
// very execution and the call's own task, and it goes at least as far as
// the heartbeat the retry has: anyone can write the store, and a record
// that is not so is ignored (the retry continues from its heartbeat). A
// first attempt reads nothing.
func TestNamedAnswerTakenOnlySigned(t *testing.T) {
	ctx := context.Background()
	info := CallInfo{Namespace: "default", Workflow: "brood-run-x", Run: "run-1", Attempt: 2}
	own, friend, stranger := seeded(1), seeded(2), seeded(3)
	trusted := NewTrust()
	if err := trusted.Add(friend.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	earlier := info
	earlier.Attempt = 1
	answer := func(s *Signer, in CallInfo, task string, pos int64) Heartbeat {
		hb := Heartbeat{TaskID: task, Worker: "w", Transcript: Ref{Key: "sha256/ab", Size: pos, SHA256: "ab"}, Position: pos}
		if s != nil {
			NewWorkerKeys(s, nil).sign(in, &hb)
		}
		return hb
	}
	otherRun := earlier
	otherRun.Run = "run-0"
	same := earlier
	same.Attempt = 2
	cases := []struct {
		name  string
		named Heartbeat
		at    Heartbeat // the heartbeat the retry has
		take  bool
	}{
		{"a friend's, earlier attempt", answer(friend, earlier, "t1", 90), Heartbeat{}, true},
		{"its own, earlier attempt", answer(own, earlier, "t1", 90), answer(friend, earlier, "t1", 40), true},
		{"a stranger's", answer(stranger, earlier, "t1", 90), Heartbeat{}, false},
		{"unsigned", answer(nil, earlier, "t1", 90), Heartbeat{}, false},
		{"another execution's", answer(friend, otherRun, "t1", 90), Heartbeat{}, false},
		{"this attempt's own number", answer(friend, same, "t1", 90), Heartbeat{}, false},
		{"another task's", answer(friend, earlier, "t2", 90), Heartbeat{}, false},
		{"behind the heartbeat", answer(friend, earlier, "t1", 90), answer(friend, earlier, "t1", 120), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, err := blobstore.Open(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			a := &Activities{Store: store, Keys: NewWorkerKeys(own, trusted)}
			key := answerPrefix + "k"
			if _, err := store.Create(ctx, key, mustJSON(t, tc.named)); err != nil {
				t.Fatal(err)
			}
			got, ok := a.namedAnswer(ctx, key, info, "t1", tc.at)
			if ok != tc.take || ok && got.Position != tc.named.Position {
				t.Fatalf("taken %v (%+v); want %v", ok, got, tc.take)
			}
			first := info
			first.Attempt = 1
			if _, ok := a.namedAnswer(ctx, key, first, "t1", Heartbeat{}); ok {
				t.Error("a first attempt took a named answer")
			}
			// Create-once: the name taken, this worker's answer goes by
			// its heartbeat.
			if a.nameAnswer(ctx, key, answer(own, info, "t1", 200)) {
				t.Error("named an answer over a record already there")
			}
		})
	}
	store, err := blobstore.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: store, Keys: NewWorkerKeys(own, trusted)}
	if _, ok := a.namedAnswer(ctx, answerPrefix+"none", info, "t1", Heartbeat{}); ok {
		t.Error("took an answer where none is named")
	}
	if !a.nameAnswer(ctx, answerPrefix+"new", answer(own, earlier, "t1", 90)) {
		t.Fatal("could not name an answer where none is")
	}
	if _, ok := a.namedAnswer(ctx, answerPrefix+"new", info, "t1", Heartbeat{}); !ok {
		t.Error("a retry did not take the answer its worker named")
	}
	if a.nameAnswer(ctx, answerPrefix+"unsigned", answer(nil, earlier, "t1", 90)) {
		t.Error("named an unsigned answer")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
