//go:build !unix

package childrun

// protocolFDsCloseOnExec has nothing to mark off Unix.
func protocolFDsCloseOnExec() {}
