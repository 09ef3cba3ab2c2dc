package temporal

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/broodhq/brood/internal/dispatch"
)

// A checkout's records are under the state directory named by its common
// git dir's path (taskdir.CheckoutState), so a checkout moved or renamed
// would lose them: its keyless calls "unverified", its landings made
// again. The checkout's secret (checkoutmark.go) moves with it; its state
// directory names the marks of the checkouts that kept records there
// (checkoutFile), and a checkout whose own state directory does not exist
// yet takes over the one whose common git dir is gone and that names its
// mark: the same checkout, moved (TestAMovedCheckoutLandsItsOwnCall).
// Only a directory of a checkout that no longer exists where it was is
// taken, so a secret copied into another checkout takes nothing of a
// checkout that is still there.

// checkoutFile names, in a checkout's state directory, the checkout.
const checkoutFile = "checkout.json"

// checkoutID is what checkoutFile holds: the common git dir the state
// directory is for, and the marks of the checkouts that kept records in
// it (a linked work tree has a secret of its own).
type checkoutID struct {
	Common string   `json:"common"`
	Marks  []string `json:"marks"`
}

// placeCheckout notes mark in the checkout's state directory state (for
// the common git dir common), where it exists; where it does not, it
// takes over the state directory of this checkout before it moved, if
// there is one. Best effort: without it a moved checkout's calls are
// unverified, as without a record.
func placeCheckout(state, common, mark string) {
	if mark == "" {
		return
	}
	fi, err := os.Lstat(state)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if from := movedFrom(filepath.Dir(state), mark); from != "" && os.Rename(from, state) == nil {
			noteCheckout(state, common, mark, true)
		}
	case err == nil && fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0:
		noteCheckout(state, common, mark, false)
	}
}

// noteCheckout adds mark to state's checkoutFile (common the checkout's
// common git dir now: moved, it is the new one).
func noteCheckout(state, common, mark string, moved bool) {
	file := filepath.Join(state, checkoutFile)
	var id checkoutID
	if err := readFileRecord(file, &id); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	if id.Common == common && slices.Contains(id.Marks, mark) && !moved {
		return
	}
	id.Common = common
	if !slices.Contains(id.Marks, mark) {
		id.Marks = append(id.Marks, mark)
	}
	_ = dispatch.WriteJSON(file, &id)
}

// movedFrom is the state directory under checkouts whose checkoutFile
// names mark and a common git dir that no longer exists ("" none).
func movedFrom(checkouts, mark string) string {
	ents, err := os.ReadDir(checkouts)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		var id checkoutID
		if readFileRecord(filepath.Join(checkouts, e.Name(), checkoutFile), &id) != nil || !slices.Contains(id.Marks, mark) || !filepath.IsAbs(id.Common) {
			continue
		}
		if _, err := os.Lstat(id.Common); errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(checkouts, e.Name())
		}
	}
	return ""
}
