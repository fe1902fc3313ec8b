package config

import "fmt"

// Action is what a finding does: deny blocks (a failing lint, a rejected
// admission request); warn reports without blocking; audit only records:
// the audit of stored objects, lint's JSON and SARIF and the metrics report
// it, kubectl never shows it and nothing fails on it. A rule is rolled out
// as audit, then warn, then deny.
type Action string

// The actions a finding can take.
const (
	Deny  Action = "deny"
	Warn  Action = "warn"
	Audit Action = "audit"
)

// Actions lists the valid actions, strongest first.
var Actions = []Action{Deny, Warn, Audit}

// EnforcementPoint is where rules are evaluated. Like Gatekeeper's scoped
// enforcement actions, a rule can deny at one point and only warn at another.
type EnforcementPoint string

// The enforcement points.
const (
	CI        EnforcementPoint = "ci"        // karpgate lint
	Admission EnforcementPoint = "admission" // karpgate serve
)

// EnforcementPoints lists the valid enforcement points.
var EnforcementPoints = []EnforcementPoint{CI, Admission}

// ParseAction checks s is a valid action.
func ParseAction(s string) (Action, error) {
	for _, a := range Actions {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("%q is not an action; use deny, warn or audit", s)
}

// ParseEnforcementPoint checks s is a valid enforcement point.
func ParseEnforcementPoint(s string) (EnforcementPoint, error) {
	for _, p := range EnforcementPoints {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not an enforcement point; use ci or admission", s)
}
