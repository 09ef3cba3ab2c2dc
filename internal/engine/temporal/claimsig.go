package temporal

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"

	"github.com/broodhq/brood/internal/blobstore"
)

// Signed claim records (review26 P3-4): a call number's record
// (fleet/calls/…, seqClaim) and a chain step's (fleet/chains/…,
// claimChain) are created only where none is, in the fleet store that
// every submitter writes too. A record another submitter created first
// (the claim key and the run's tasks are in the run's history) made the
// honest call or step fail with a message that blamed the run's workflow.
// So a worker signs each claim record it creates with its worker key, and
// a record that is not the claim of a worker key it trusts (its own, or a
// worker it continues calls of) is named as what it is: the call or step
// is still refused (the record is there: a denial of service stays
// possible), but its message says who could have put it there.

// claimSigContext separates a claim record's signature from any other
// use of a worker key.
const claimSigContext = "brood fleet claim v1\x00"

// maxClaimRecord bounds what a worker reads of a claim record.
const maxClaimRecord = 4 << 10

// claimRecord is a claim as its worker signed it.
type claimRecord struct {
	Claim string `json:"claim"`
	Key   []byte `json:"key"`
	Sig   []byte `json:"sig"`
}

// claimMessage is what a claim record's signature covers: the record's
// key in the store and its claim.
func claimMessage(key, claim string) []byte {
	return []byte(claimSigContext + key + "\x00" + claim)
}

// claimRecordOf is the record a worker creates for claim mine under key:
// signed with its own key; mine as it is for a worker with no keys (tests
// that embed one), as workers from before signed claims wrote it.
func (k *WorkerKeys) claimRecordOf(key, mine string) []byte {
	if k == nil {
		return []byte(mine)
	}
	b, _ := json.Marshal(claimRecord{Claim: mine, Key: k.own.Public().(ed25519.PublicKey), Sig: ed25519.Sign(k.own, claimMessage(key, mine))})
	return b
}

// runWorkers are the worker keys of the run of sub as this worker knows
// them: the run's signed set (a plan's Workers), else the workers this
// one trusts, and its own key (tipSigners).
func (k *WorkerKeys) runWorkers(sub *Submission) *Trust {
	if sub == nil {
		sub = &Submission{}
	}
	return tipSigners(sub, k.own.Public().(ed25519.PublicKey), k.trusted).trust
}

// errForeignClaim: a claim record no worker this one trusts signed.
var errForeignClaim = errors.New("the fleet store holds a claim no worker of this run signed")

// claimReader reads a record whose content its reader cannot know
// (*blobstore.Store).
type claimReader interface {
	ReadRecord(ctx context.Context, key string, limit int64) ([]byte, error)
}

// judgeClaim says what the record b found under key is to the activity
// whose claim is mine, in the run whose workers are run (runWorkers):
// found (its own claim, validly signed: a retry of the same activity,
// wherever it ran; byRun when a worker of the run signed it), errClaimed
// (another activity's claim, signed by a worker of the run), or
// errForeignClaim (anything else). A record as a worker from before
// signed claims wrote it (mine itself) is found, as before; with no keys
// (nothing signed nor checked) any other record is errClaimed, as before.
func (k *WorkerKeys) judgeClaim(key, mine string, b []byte, run *Trust) (found, byRun bool, err error) {
	if string(b) == mine {
		return true, true, nil
	}
	if k == nil {
		return false, false, errClaimed
	}
	var r claimRecord
	if json.Unmarshal(b, &r) != nil || len(r.Key) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(r.Key), claimMessage(key, r.Claim), r.Sig) {
		return false, false, errForeignClaim
	}
	byRun = run.trusts(r.Key)
	switch {
	case r.Claim == mine:
		return true, byRun, nil
	case byRun:
		return false, true, errClaimed
	}
	return false, false, errForeignClaim
}

// foreignClaim is the refusal of a call or step (what) whose claim
// record under key no worker of the run signed: whoever can write to the
// store wrote it, or, in a fleet being upgraded, a worker from before
// claims were signed claimed another activity there (review28 P3-2).
func foreignClaim(what, key string) error {
	return refusedf("%s is refused, nothing run: %s (its record: %s), which whoever can write to the store put there first, or a worker from before claims were signed (upgrade every worker of the fleet); check who can write to the fleet store, and run it again", what, errForeignClaim, key)
}

// claimRead is the record under key, read whole: errForeignClaim when it
// is larger than any worker writes (maxClaimRecord).
func claimRead(ctx context.Context, cs createStore, key string) ([]byte, error) {
	r, ok := cs.(claimReader)
	if !ok {
		return nil, refusedf("the fleet store cannot read a claim record it did not write: use a file:// or s3:// store")
	}
	b, err := r.ReadRecord(ctx, key, maxClaimRecord)
	if errors.Is(err, blobstore.ErrTooLarge) {
		return nil, errForeignClaim
	}
	return b, err
}
