package temporal

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"

	commonpb "go.temporal.io/api/common/v1"
)

// memoOrigin is the memo key of where a run or a call was submitted from.
const memoOrigin = "brood_origin"

// Origin is the tree a run or a call was submitted from: its change lands
// there and nowhere else (another checkout of the same account lists it,
// never lands it).
type Origin struct {
	Host string `json:"host"`
	Root string `json:"root"`
	// Mark names the submitting checkout by its git directory's identity
	// (checkoutMark): the checkout is the submitter's wherever it is now
	// (moved or renamed within its file system); a clone, or a copy of
	// the files with their .brood/ and .git/, has another. Only a hash is
	// in the memo, which everyone on the namespace reads.
	Mark string `json:"mark,omitempty"`
}

// String names the tree for the user ("/src/app on host h").
func (o Origin) String() string {
	if o.Host == "" {
		return o.Root
	}
	return o.Root + " on host " + o.Host
}

// origin is this submitter's tree (Root "" when it has none).
func (e *Engine) origin() Origin {
	root := e.cfg.ProjectRoot
	if root == "" && e.cfg.Code != nil {
		root = e.cfg.Code.Dir
	}
	if root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
	}
	host, _ := os.Hostname()
	return Origin{Host: host, Root: root}
}

// withOrigin adds this submitter's tree, and its checkout's mark, to a
// workflow's memo.
func (e *Engine) withOrigin(memo map[string]any) map[string]any {
	if o := e.origin(); o.Root != "" {
		o.Mark = checkoutMark(o.Root)
		memo[memoOrigin] = o
	}
	return memo
}

// foreign is the tree a workflow was submitted from when it is not this
// submitter's (ok false: this one's, or one from before origins were
// recorded).
func (e *Engine) foreign(memo map[string]*commonpb.Payload) (o Origin, ok bool) {
	if !e.memo(memo, memoOrigin, &o) || o.Root == "" {
		return Origin{}, false
	}
	me := e.origin()
	if o.Root == me.Root && cmp.Or(o.Host, me.Host) == me.Host {
		return Origin{}, false
	}
	if o.Mark != "" && me.Root != "" && o.Mark == checkoutMark(me.Root) {
		return Origin{}, false // this checkout, moved since it submitted
	}
	return o, true
}

// notHere is the one-line refusal to land a foreign workflow's change.
func notHere(what, id string, o Origin, verb string) error {
	return fmt.Errorf("%s %s was submitted from %s, not this checkout: its change lands only there; run %s there", what, id, o, verb)
}
