package config

import (
	"fmt"
	"strings"
)

// Waivers governs waiver annotations.
type Waivers struct {
	// Approvers are who may add or change a karpgate.io/waive-<rule>
	// annotation, judged at admission from the request's user (rule
	// KG006); their waivers take effect in the write that adds them. Empty:
	// anyone who may edit the object, but on a production object not in
	// the write that the waiver excuses (see AllowSameWrite). Removing a
	// waiver is always allowed: it only makes the rules stricter.
	Approvers Approvers `yaml:"approvers,omitempty" json:"approvers"`
	// AllowSameWrite true lets a waiver waive the production denials of
	// the very write that adds or changes it, as karpgate once did.
	// Default false: such a write is refused, and the waiver goes in a
	// write of its own, earlier, that someone reviews. What true gives up:
	// anyone who may edit a production object can break a production rule
	// and waive it in one write, with nobody seeing the waiver first. It
	// changes nothing when approvers are named: their waivers take effect
	// at once, and nobody else may add one.
	AllowSameWrite bool `yaml:"allowSameWrite,omitempty" json:"allowSameWrite"`
}

// Approvers name users and groups as the API server authenticates them: a
// service account is the user system:serviceaccount:<namespace>:<name>,
// and every service account of a namespace the group
// system:serviceaccounts:<namespace>.
type Approvers struct {
	Users  []string `yaml:"users,omitempty" json:"users"`
	Groups []string `yaml:"groups,omitempty" json:"groups"`
}

// Waivable reports whether karpgate.yaml lets annotations waive rule id;
// the rule's own METADATA may forbid it too.
func (c *Config) Waivable(id string) bool {
	w := c.Rules[id].Waivable
	return w == nil || *w
}

// SameWriteWaivesDenials reports whether a waiver a write adds or changes
// waives that write's own production denials at admission: only when
// approvers are named (they alone may add waivers) or AllowSameWrite asks
// for it. See package waiver for the whole rule.
func (c *Config) SameWriteWaivesDenials() bool {
	return c.ApproversSet() || c.Waivers.AllowSameWrite
}

// ApproversSet reports whether waivers.approvers names anyone: only then
// are waiver annotations judged by who writes them.
func (c *Config) ApproversSet() bool {
	return len(c.Waivers.Approvers.Users)+len(c.Waivers.Approvers.Groups) > 0
}

func (c *Config) validateApprovers() error {
	for _, list := range []struct {
		field string
		names []string
	}{{"users", c.Waivers.Approvers.Users}, {"groups", c.Waivers.Approvers.Groups}} {
		for i, name := range list.names {
			if strings.TrimSpace(name) == "" || strings.TrimSpace(name) != name {
				return c.errorAt(fmt.Sprintf("waivers.approvers.%s[%d]", list.field, i), fmt.Sprintf("%q is not a user or group name; write it exactly as the API server authenticates it, such as alice@example.com or system:serviceaccount:argocd:argocd-application-controller", name))
			}
		}
	}
	return nil
}
