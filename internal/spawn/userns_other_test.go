//go:build !linux

package spawn_test

import "testing"

// denyUserNS needs Linux (TestUserNSAnswer skips before it off Linux).
func denyUserNS(t *testing.T) { t.Skip("needs Linux") }
