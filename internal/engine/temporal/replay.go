package temporal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/blobstore"
)

// Replays. A signed submission names its workflow id, so it cannot run
// under another one; Temporal itself keeps one open run per id, so it
// cannot run twice at once. What is left is a captured submission started
// again under its own id after its run ended: the signature still holds.
// The first activity of a run claims the submission in the fleet's store
// (a record named by the signature's hash, holding the run's id); an
// activity of any other run that carries it is refused. A submission is
// claimed only within SubmissionLifetime of its signing, so a replay
// after that is refused even if its record is gone.

// SubmissionLifetime is how long after signing a submission may start
// running on the fleet (its first activity).
const SubmissionLifetime = 24 * time.Hour

// RunLifetime is how long after signing a run's activities may still
// run: a claimed run is no run for ever (whoever completes its workflow
// tasks could keep it open and schedule calls on the workers' keys). A
// run that needs longer is resumed, which signs it anew.
const RunLifetime = 48 * time.Hour

// ClockSkew is how far ahead of a worker's clock a submission may say it
// was signed: more, and its lifetimes would start in the future (a run
// signed ten years ahead would run for ten years).
const ClockSkew = 5 * time.Minute

// recordStore is a store that keeps named records (*blobstore.Store).
type recordStore interface {
	Put(ctx context.Context, key string, r io.Reader) (Ref, error)
	ReadAll(ctx context.Context, ref Ref) ([]byte, error)
}

// claimKey names the record of a signed submission.
func claimKey(s *Signed) string {
	sum := sha256.Sum256(append(append([]byte(nil), s.Sig...), s.Key...))
	return "fleet/claims/" + hex.EncodeToString(sum[:])
}

// claim makes run the one run of the signed submission, or says which
// run has it. Nil Trust or AllowUnsigned: nothing is claimed (nothing is
// checked either).
func (a *Activities) claim(ctx context.Context, s *Signed, run string) error {
	if a.Trust == nil || a.Trust.AllowUnsigned || s == nil {
		return nil
	}
	cs, ok := a.Store.(recordStore)
	if !ok {
		return refusedf("the fleet store keeps no records, so a replayed submission cannot be told from its first run: use a file:// or s3:// store")
	}
	key := claimKey(s)
	if at, loaded := a.claimed.Load(key + " " + run); loaded {
		return runAlive(s, at.(time.Time))
	}
	mine := []byte(run)
	sum := sha256.Sum256(mine)
	// One read: the record as this run would have written it. Absent:
	// unclaimed; another run's id reads as not matching.
	_, err := cs.ReadAll(ctx, Ref{Key: key, Size: int64(len(mine)), SHA256: hex.EncodeToString(sum[:])})
	if err != nil && !errors.Is(err, blobstore.ErrNotFound) && !errors.Is(err, blobstore.ErrCorrupt) {
		return fmt.Errorf("look up the submission's run in the fleet store: %w", err)
	}
	if errors.Is(err, blobstore.ErrCorrupt) {
		return refusedf("this signed submission already ran on the fleet (under the same workflow id, another run): a replay of it is refused; submit it again to run it again")
	}
	sub, perr := a.Trust.verify(ctx, a.Store, s)
	var again retry
	if errors.As(perr, &again) {
		return perr
	} else if perr != nil {
		return refused{perr}
	}
	if errors.Is(err, blobstore.ErrNotFound) {
		if err := signedInThePast(s, sub.At); err != nil {
			return err
		}
		if age := time.Since(sub.At); age > SubmissionLifetime {
			return refusedf("the submission of key %s was signed %s ago, more than %s: a submission starts on the fleet soon after it is signed, so this is a replay (submit it again)", Fingerprint(s.Key), age.Round(time.Minute), SubmissionLifetime)
		}
		if _, err := cs.Put(ctx, key, bytes.NewReader(mine)); err != nil {
			return fmt.Errorf("record the submission's run in the fleet store: %w", err)
		}
	} else if err := runAlive(s, sub.At); err != nil {
		return err // claimed by this run, on another worker: as long as a run may go on
	}
	a.claimed.Store(key+" "+run, sub.At)
	return nil
}

// runAlive refuses an activity of a run signed more than RunLifetime ago,
// whichever worker saw it claim.
func runAlive(s *Signed, at time.Time) error {
	if err := signedInThePast(s, at); err != nil {
		return err
	}
	if age := time.Since(at); age > RunLifetime {
		return refusedf("the submission of key %s was signed %s ago, more than the %s a run may go on: resume it (brood workflow resume, brood tasks resume), which signs it anew", Fingerprint(s.Key), age.Round(time.Minute), RunLifetime)
	}
	return nil
}

// signedInThePast refuses a submission that says it was signed more than
// ClockSkew after this worker's now. The refusal is this worker's clock
// against the submitter's, so it is not final: a worker whose own clock is
// behind must not fail calls others would take (the call is tried again,
// within its attempts).
func signedInThePast(s *Signed, at time.Time) error {
	if ahead := time.Until(at); ahead > ClockSkew {
		return fmt.Errorf("the submission of key %s says it was signed %s from now, more than the %s two clocks may differ: set the submitter's clock (or this worker's) right (NTP) and submit it again", Fingerprint(s.Key), ahead.Round(time.Minute), ClockSkew)
	}
	return nil
}

// refused is a claim's refusal (the others are the store's errors: the
// activity is tried again).
type refused struct{ error }

func refusedf(format string, args ...any) error { return refused{fmt.Errorf(format, args...)} }

// claimError is how an activity fails on a claim's error.
func claimError(err error) error {
	var r refused
	if errors.As(err, &r) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	return err
}
