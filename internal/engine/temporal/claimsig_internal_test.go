package temporal

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestClaimRecordsNameWhoPutThem (review26 P3-4): a call number's claim
// record and a chain step's are created only where none is, in the store
// every submitter writes. A record a worker of the run signed is that
// worker's claim (a retry of the same activity elsewhere passes, another
// activity's is refused as before); any other record (garbage, a key no
// worker of the run has, too large) still refuses the call or step, but
// says the store holds a claim no worker of the run signed, never that
// the run's workflow scheduled it twice.
func TestClaimRecordsNameWhoPutThem(t *testing.T) {
	ctx := context.Background()
	a, b, stranger := seeded(1), seeded(2), seeded(3)
	trustB := NewTrust()
	trustB.keys[string(b.key.Public().(ed25519.PublicKey))] = "worker b"
	keysA := NewWorkerKeys(a, trustB)
	keysB := NewWorkerKeys(b, nil)
	keysStranger := NewWorkerKeys(stranger, nil)
	const mine = "run-1 1 digest"
	const foreign = "the fleet store holds a claim no worker of this run signed"
	const oldWorker = "or a worker from before claims were signed (upgrade every worker of the fleet)"
	for _, tc := range []struct {
		name    string
		record  func(key string) []byte // nil: none
		attempt int
		want    string // "": the claim is taken
	}{
		{"none", nil, 1, ""},
		{"garbage", func(string) []byte { return []byte("IMPOSTOR") }, 2, foreign},
		{"too large", func(string) []byte { return []byte(strings.Repeat("x", maxClaimRecord+1)) }, 2, foreign},
		{"mine, a new activity, signed by a key no worker of the run has", func(k string) []byte { return keysStranger.claimRecordOf(k, mine) }, 1, foreign},
		{"another activity's, signed by a key no worker of the run has", func(k string) []byte { return keysStranger.claimRecordOf(k, "run-1 1 other") }, 2, foreign},
		// A retry of this very activity passes whoever signed its claim
		// (as it did before claims were signed).
		{"mine, retried, signed by a key no worker of the run has", func(k string) []byte { return keysStranger.claimRecordOf(k, mine) }, 2, ""},
		{"mine, its signature another claim's", func(k string) []byte {
			r := keysB.claimRecordOf(k, "run-1 1 other")
			return []byte(strings.Replace(string(r), `"claim":"run-1 1 other"`, `"claim":"`+mine+`"`, 1))
		}, 2, foreign},
		{"another activity's, a trusted worker's", func(k string) []byte { return keysB.claimRecordOf(k, "run-1 1 other") }, 2, "was claimed by another activity already"},
		{"mine, retried on a trusted worker", func(k string) []byte { return keysB.claimRecordOf(k, mine) }, 2, ""},
		{"mine, a new activity of it", func(k string) []byte { return keysB.claimRecordOf(k, mine) }, 1, "ran already as this very activity"},
		{"mine, from before signed claims", func(string) []byte { return []byte(mine) }, 2, ""},
		// A worker from before signed claims (a fleet being upgraded)
		// wrote another activity's claim as its bare text: refused, and
		// the refusal names that worker too, not only the store's
		// writers (review28 P3-2).
		{"another activity's, from before signed claims", func(string) []byte { return []byte("run-1 1 other") }, 2, foreign},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := blobstore.Open(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			act := &Activities{Store: store, Keys: keysA}
			s := &Signed{Key: []byte("submitter"), Sig: []byte(tc.name)}
			key := callClaimKey(s, 1)
			if tc.record != nil {
				if _, err := store.Create(ctx, key, tc.record(key)); err != nil {
					t.Fatal(err)
				}
			}
			err = act.seqClaim(ctx, s, &Submission{Workflow: "run-1"}, 1, mine, tc.attempt)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v; want the claim taken", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("got %v; want it refused in one line saying %q", err, tc.want)
			case tc.want == foreign && strings.Contains(err.Error(), "not the run's workflow"):
				t.Errorf("%v: it blames the run's workflow", err)
			case tc.want == foreign && !strings.Contains(err.Error(), oldWorker):
				t.Errorf("%v: it does not say %q (a fleet being upgraded)", err, oldWorker)
			}
			if tc.record == nil {
				// The record it made is its worker's claim, signed: the
				// same activity's retry on worker b passes.
				got, err := store.ReadRecord(ctx, key, maxClaimRecord)
				if err != nil {
					t.Fatal(err)
				}
				trustA := NewTrust()
				trustA.keys[string(a.key.Public().(ed25519.PublicKey))] = "worker a"
				kb := NewWorkerKeys(b, trustA)
				if found, byRun, err := kb.judgeClaim(key, mine, got, kb.runWorkers(nil)); !found || !byRun || err != nil {
					t.Errorf("worker b's reading of worker a's record: found %v, by the run %v, %v; want its own activity's claim, signed by a worker of the run", found, byRun, err)
				}
			}
		})
	}
	t.Run("a chain step's", func(t *testing.T) {
		store, err := blobstore.Open(ctx, "file://"+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		trust := NewTrust()
		trust.AllowUnsigned = true // the submission verified against its own key
		act := &Activities{Store: store, Keys: keysA, Trust: trust}
		signed, err := seeded(9).Sign(Submission{Kind: "plan", Workflow: "run-1", At: time.Now().UTC()})
		if err != nil {
			t.Fatal(err)
		}
		in := ChainInput{TaskID: dispatch.NewID(), Signed: signed}
		if _, err := store.Create(ctx, chainClaimKey(in.Signed, in.TaskID), []byte("IMPOSTOR")); err != nil {
			t.Fatal(err)
		}
		err = act.claimChain(ctx, in, CallInfo{Workflow: "run-1", Run: "exec-1"}, "7")
		if err == nil || !strings.Contains(err.Error(), foreign) || !strings.Contains(err.Error(), oldWorker) || strings.Contains(err.Error(), "not the run's workflow") {
			t.Errorf("got %v; want it refused: %s", err, foreign)
		}
	})
}
