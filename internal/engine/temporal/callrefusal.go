package temporal

import (
	"cmp"
	"errors"
	"regexp"
	"strings"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// A single call's refusal as the submitter shows it: a worker refuses a
// call by failing its activity (ErrRefused, ErrUntrusted), and whoever
// polls the call's queue can fail it the same way with any text ("trust
// the new one with: brood fleet trust-worker '...'"). The refusal's text
// is shown only when a worker key this submitter trusts signed it for
// this call (Activities.signFailure signs every failure, refusals
// included) or it is one of brood's own refusal sentences whose variable
// parts are what brood puts there (broodRefusals); else brood's sentence
// (unsignedRefusal).

// unsignedRefusal is what the submitter says of a refusal it cannot
// vouch for.
const unsignedRefusal = "a worker refused the call; its reason is not shown because no brood worker signed it (whoever polls the call's queue on Temporal can fail it with any text)"

// broodRefusals are refusal sentences of brood's a submitter may show
// unsigned: a worker that does not trust the submission's key says so
// (untrusted, Activities.refuse), its variable parts a key's fingerprint
// and the names of the workers that refused it. None names a key to
// trust: a worker's key is trusted from the worker's own start line.
var broodRefusals = regexp.MustCompile(`^the submission is signed by key SHA256:[A-Za-z0-9+/]{43}, which ` +
	`(?:this worker does not trust:|the workers that took it \([A-Za-z0-9._:@-]{1,80}(?:, [A-Za-z0-9._:@-]{1,80}){0,7}\) do not trust: a queue's workers share one allowlist;)` +
	` add its public key (?:to theirs )?\(brood worker --trusted-key, or ~/\.config/brood/fleet/` + regexp.QuoteMeta(TrustedKeysFile) + `\) if you trust who holds it` +
	`(?: \(its last attempt: the call is not tried again\))?$`)

// vetRefusal is got with a refusal's text replaced by brood's sentence
// unless a trusted worker key signed it for call c, started with start,
// (the history's failed activity carries it, signed) or it is one of
// broodRefusals.
func (e *Engine) vetRefusal(h *historypb.History, c resultCall, start CallInputW, got replayed[*CallOutput]) replayed[*CallOutput] {
	var app *temporal.ApplicationError
	if got.Err == nil || !errors.As(got.Err, &app) || !isRefusal(app) {
		return got
	}
	msg := finalMessage(app)
	if e.cfg.Workers == nil {
		return got // no worker set: nothing is checked, a result no more than a refusal (takeResult)
	}
	if broodRefusals.MatchString(msg) || e.signedRefusal(h, c, start, msg) {
		return got
	}
	got.Err = temporal.NewNonRetryableApplicationError(unsignedRefusal, ErrRefused, nil)
	return got
}

// signedRefusal: the history's last failed activity is a refusal whose
// details are a failed result for call c, signed by a worker key this
// submitter trusts for the input brood's code makes from start (a
// refusal of a brief the completer made is not the call's:
// briefRefusal), that says msg (the workflow's failure is that refusal's
// message, finalMessage).
func (e *Engine) signedRefusal(h *historypb.History, c resultCall, start CallInputW, msg string) bool {
	evs := h.GetEvents()
	for i := len(evs) - 1; i >= 0; i-- {
		a := evs[i].GetActivityTaskFailedEventAttributes()
		if a == nil {
			continue
		}
		info := a.GetFailure().GetApplicationFailureInfo()
		if info == nil || (info.GetType() != ErrRefused && info.GetType() != ErrUntrusted) {
			return false
		}
		var out CallOutput
		dc := cmp.Or[converter.DataConverter](e.cfg.DataConverter, converter.GetDefaultDataConverter())
		if info.GetDetails() == nil || dc.FromPayloads(info.GetDetails(), &out) != nil || out.Sig == nil || out.Error == "" {
			return false
		}
		return e.cfg.Workers.check(c, &out) == nil && briefRefusal(c.Task, start, &out) == nil && strings.HasPrefix(msg, out.Error)
	}
	return false
}
