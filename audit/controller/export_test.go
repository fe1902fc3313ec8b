package controller

import "github.com/karpgate/karpgate/policies"

// What the tests of package controller_test, which reach a real API
// server through test/testenv (and so import serve, which imports this
// package), share with this package's own.
var (
	NodePoolWithWaivers = nodePoolWithWaivers
	WaiverKey           = waiverKey
	NewEngine           = newEngine
	NewEngineWithLimits = newEngineWithLimits
	Now                 = now
)

// NewStaticEngines hands out e.
func NewStaticEngines(e *policies.Engine) Engines { return &swappable{e: e} }
