//go:build !linux

package isolate

import "context"

// treeWatch is Linux's (inotify); elsewhere the finish always walks.
type treeWatch struct{}

func startTreeWatch(context.Context, *repo, *watchCache) *treeWatch { return nil }
func (w *treeWatch) settle(string, []string)                        {}
func (w *treeWatch) quiet() bool                                    { return false }
func (w *treeWatch) close()                                         {}
