package temporal

// maxRecord bounds a landing or sent-starts record brood reads back.
const maxRecord = 1 << 20

// A checkout's fleet records (landed.json, a keyless checkout's
// sent.json) are trust inputs: a forged sent.json makes another's run the
// user's call, and tasks resume lands its change. They live in the user's
// state directory, fleet/KEY under taskdir.CheckoutDir of the checkout's
// common git dir (landDir), which no child writes or reads wherever
// Landlock confines it (isolate.stateBaseHidden), never under the git dir,
// which an in-place writer writes wherever no kernel holds it (no user
// namespaces: review34 P2-1). Records an older brood left in .git/brood
// are never read (a call from before is "unverified"). They are read,
// written and locked only through taskdir's state records
// (taskdir.ReadStateJSON, WriteStateJSON, MakeStateDir, LockStateFile):
// every directory from the state's checkouts/ down taken only as itself,
// reached through no link, made 0700; the file only as a regular file
// opened without following a link, of bounded size, written tmp+rename.
// Anything else is no record for a read, and a refused write. A checkout
// moved or renamed takes over its records by its common git dir's
// identity (taskdir.CheckoutDir).
