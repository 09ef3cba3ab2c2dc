// Package dirents lists the subdirectories of a directory without a
// stat or an allocation per file: the walks of a whole work tree that
// look only for directories and one name (a nested repository's .git:
// the configuration guard's; the tree watch's) cost what the tree's
// directories cost, not its files; List keeps its symbolic links too,
// read (readlink) and no other file.
package dirents

// Entry is one entry of a directory Subdirs or List kept.
type Entry struct {
	Name string
	Dir  bool
	// Link says the entry is a symbolic link, Target what it holds
	// (List with links only).
	Link   bool
	Target string
	// Special names the type of an entry that is neither a regular file,
	// a directory nor a link ("fifo", "socket", "char device", "block
	// device"), kept by List with links: git never sees one (redteam19
	// P3-3).
	Special string
}
