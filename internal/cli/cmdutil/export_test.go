package cmdutil

// For the test over brood's real command tree (fleet_tree_test.go).
type FleetNeeds = fleetNeeds

const (
	NoFleet           = noFleet
	FleetIfConfigured = fleetIfConfigured
	FleetSurely       = fleetSurely
)

var FleetNeed = fleetNeed
