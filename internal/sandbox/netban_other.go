//go:build !linux

package sandbox

import "errors"

// NoNetworkForCommand has no means off Linux: a command cannot be kept
// off the network there, and the caller refuses to run it.
func NoNetworkForCommand() (string, error) {
	return "", errors.New("sandbox: a command can be kept off the network only on Linux")
}

// NetworkBan says that nothing holds a command off the network here.
func NetworkBan() (string, bool) { return "nothing: off Linux", false }
