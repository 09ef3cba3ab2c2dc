package codesnap

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/gitx"
)

// A developer's next submission differs from the one before by a few
// files, but a pack of the whole dirty state ships all of it again (44 MiB
// for issue 26's tree), which every worker fetches and indexes, and the
// store keeps, once per run. So the submitter remembers what it shipped
// last on a base (a chain record), and the next capture on that base packs
// only the objects of its tree that neither the base's tree nor the tree
// shipped last has (`rev-list --objects TREE --not BASE^{tree}
// PREV^{tree}`): the snapshot names the earlier packs (PackChain, oldest
// first, each with the tree it completes) and the new one. A worker that
// indexed the earlier packs indexes the new one alone; one that did not
// indexes the chain first (pack.go: indexPack).
//
// The record is the submitter's own, in the user's state directory of
// the checkout (taskdir.CheckoutState of the common git dir, resolved:
// dirty-packs/, one file per work tree), outside every tree a child
// writes and hidden from every child Landlock confines (never under the git dir, which an
// in-place writer nothing holds writes: review34 P2-1; one an older brood
// left in .git/brood/dirty-packs is not read). Linked work trees share the
// common dir's objects but keep a chain each; a new clone starts with
// none. The record is still read as what it is, a hint: within its
// directory, never through a link or from a FIFO, bounded (readRecord);
// what it names is checked before use (usable). Anything off — an
// unreadable record, another store or base, an earlier tree the
// repository no longer has, a pack no longer in the store (a Stat, not a
// download) — and the capture ships a full pack, as without a record.

const (
	// maxPackChain bounds the packs a snapshot names: its chain's links
	// and its own pack. A capture past it starts a new full pack.
	maxPackChain = 8
	// maxChainAge: a chain whose first pack is older starts afresh, so a
	// link is never near the age a store's lifecycle rule expires it at.
	maxChainAge = 24 * time.Hour
)

// chainRecord is what the submitter shipped last from a work tree.
type chainRecord struct {
	// Store is the store's URL the packs are in (credentials removed).
	Store string `json:"store"`
	// Base is the commit the packs' trees sit on.
	Base string `json:"base"`
	// Since is when the chain's first (full) pack was made.
	Since time.Time `json:"since"`
	// Links are the packs, oldest first; the last one's tree is the tree
	// shipped last.
	Links []chainLink `json:"links"`
}

// chainLink is a pack of the chain and how many objects it holds.
type chainLink struct {
	PackLink
	Objects int `json:"objects"`
}

// recordPath is where the chain record of the work tree at top, in the
// checkout whose common git dir is common, lives (statefile.go):
// H/dirty-packs/FILE under root. "" without a home: no chain is kept.
func recordPath(common, top string) (root, rel string) {
	return stateFile(common, "dirty-packs", workTreeName(top, 8)+".json")
}

// dirtyPacks stores the objects of tree (base + dirty state) that base
// lacks — as a pack completing the chain of the submitter's last capture
// when it can, else as a full pack — and returns the snapshot's pack and
// chain (nil pack: nothing to ship). A chain that cannot be used is never
// an error.
func dirtyPacks(ctx context.Context, store *blobstore.Store, g gitCmd, common, top, base, tree string) (*blobstore.Ref, []PackLink, error) {
	home, path := recordPath(common, top)
	if rec := readRecord(home, path); base != "" && rec.usable(ctx, store, g, base) {
		links := rec.Links
		last := links[len(links)-1]
		if last.Tree == tree {
			return last.Pack, rec.chain(len(links) - 1), nil // the same dirty state as last time
		}
		if objs, n := rec.delta(ctx, g, base, tree); n > 0 {
			ref, err := packObjects(ctx, store, g, objs)
			if err != nil {
				return nil, nil, err
			}
			next := *rec
			next.Links = append(links[:len(links):len(links)], chainLink{PackLink{Pack: ref, Tree: tree}, n})
			writeRecord(home, path, &next)
			return ref, rec.chain(len(links)), nil
		}
	}
	objs, err := dirtyObjects(ctx, g, base, tree)
	if err != nil || objs == "" {
		return nil, nil, err
	}
	ref, err := packObjects(ctx, store, g, objs)
	if err != nil {
		return nil, nil, err
	}
	if base != "" {
		writeRecord(home, path, &chainRecord{Store: store.URL(), Base: base, Since: time.Now().UTC(),
			Links: []chainLink{{PackLink{Pack: ref, Tree: tree}, strings.Count(objs, "\n")}}})
	}
	return ref, nil, nil
}

// usable says the record can be built on for a capture on base into
// store: same store and base, young and short enough, well formed, its
// last tree still in the repository and every pack still in the store.
func (r *chainRecord) usable(ctx context.Context, store *blobstore.Store, g gitCmd, base string) bool {
	if r == nil || r.Store != store.URL() || r.Base != base || len(r.Links) == 0 || len(r.Links) > maxPackChain {
		return false
	}
	if age := time.Since(r.Since); age < 0 || age > maxChainAge {
		return false
	}
	for _, l := range r.Links {
		if l.Pack == nil || checkRef("chain record pack", l.Pack) != nil || !gitx.IsObjectID(l.Tree) {
			return false
		}
	}
	if _, err := g.run(ctx, "cat-file", "-e", r.Links[len(r.Links)-1].Tree+"^{tree}"); err != nil {
		return false // pruned by a gc since
	}
	for _, l := range r.Links {
		if n, err := store.Size(ctx, l.Pack.Key); err != nil || n != l.Pack.Size {
			return false
		}
	}
	return true
}

// delta lists the objects of tree that neither base's tree nor the
// record's last tree has, and counts them; 0 when the chain is not to
// grow: at its bound, when git cannot say, when there is nothing new, or
// when the chain's later packs with this one would hold half as many
// objects as its first (the dirty state changed too much to be worth a
// chain a new worker indexes whole).
func (r *chainRecord) delta(ctx context.Context, g gitCmd, base, tree string) (string, int) {
	if len(r.Links) >= maxPackChain {
		return "", 0
	}
	objs, err := g.run(ctx, "rev-list", "--objects", tree, "--not", base+"^{tree}", r.Links[len(r.Links)-1].Tree+"^{tree}")
	n := strings.Count(objs, "\n")
	if err != nil || n == 0 {
		return "", 0
	}
	later := n
	for _, l := range r.Links[1:] {
		later += l.Objects
	}
	if 2*later > r.Links[0].Objects {
		return "", 0
	}
	return objs, n
}

// chain is the record's first n links as a snapshot's PackChain.
func (r *chainRecord) chain(n int) []PackLink {
	var out []PackLink
	for _, l := range r.Links[:n] {
		out = append(out, l.PackLink)
	}
	return out
}

// readRecord reads the chain record at rel under home (recordPath's
// root, readStateFile); nil when there is none or it cannot be read.
func readRecord(home, rel string) *chainRecord {
	data, err := readStateFile(home, rel, maxRecord)
	if err != nil {
		return nil
	}
	var r chainRecord
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	return &r
}

// maxRecord bounds a chain record's size (a few hundred bytes a link).
const maxRecord = 1 << 20

// writeRecord replaces the record at rel under home (writeStateFile). A
// record that cannot be written costs the next capture a full pack,
// nothing more.
func writeRecord(home, rel string, r *chainRecord) {
	if data, err := json.Marshal(r); err == nil {
		_ = writeStateFile(home, rel, data)
	}
}

// chainPacks are the packs snap names in the order they are indexed:
// its chain's links, then its own pack.
func (s *Snapshot) chainPacks() []PackLink {
	out := append([]PackLink(nil), s.PackChain...)
	return append(out, PackLink{Pack: s.Pack, Tree: s.DirtyTree})
}

// checkPackChain reports the first link of s's pack chain a worker must
// not use; id checks an object id of s's hash.
func (s *Snapshot) checkPackChain(id func(field, v string, optional bool) error) error {
	if len(s.PackChain) == 0 {
		return nil
	}
	if s.Pack == nil {
		return fmt.Errorf("codesnap: snapshot has a pack_chain of %d link(s) but no pack", len(s.PackChain))
	}
	if len(s.PackChain) >= maxPackChain {
		return fmt.Errorf("codesnap: snapshot pack_chain has %d links, over %d", len(s.PackChain), maxPackChain-1)
	}
	for i, l := range s.PackChain {
		if l.Pack == nil {
			return fmt.Errorf("codesnap: snapshot pack_chain link %d names no pack", i)
		}
		if err := checkRef(fmt.Sprintf("snapshot pack_chain link %d", i), l.Pack); err != nil {
			return err
		}
		if err := id(fmt.Sprintf("pack_chain link %d tree", i), l.Tree, false); err != nil {
			return err
		}
	}
	return nil
}
