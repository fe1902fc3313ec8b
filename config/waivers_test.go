package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAuditIsAnActionAtEveryPoint(t *testing.T) {
	c, err := Parse("karpgate.yaml", []byte("rules:\n  KG101:\n    severity: audit\n  KG102:\n    actions: {admission: audit, ci: deny}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id    string
		point EnforcementPoint
		want  Action
	}{
		{"KG101", CI, Audit}, {"KG101", Admission, Audit}, {"KG102", Admission, Audit}, {"KG102", CI, Deny},
	} {
		if got := c.ActionFor(tt.id, Warn, tt.point); got != tt.want {
			t.Errorf("ActionFor(%s, %s) = %s, want %s", tt.id, tt.point, got, tt.want)
		}
	}
	if c.SeverityFor("KG101", Deny) != Audit {
		t.Errorf("severity audit not read")
	}
}

func TestWaiverSettings(t *testing.T) {
	c, err := Parse("karpgate.yaml", []byte(`waivers:
  approvers:
    users: [alice@example.com, "system:serviceaccount:argocd:argocd-application-controller"]
    groups: [platform]
rules:
  KG101: {waivable: false}
  KG102: {waivable: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Waivable("KG101") || !c.Waivable("KG102") || !c.Waivable("KG103") {
		t.Errorf("Waivable: KG101=%v KG102=%v KG103=%v, want false true true", c.Waivable("KG101"), c.Waivable("KG102"), c.Waivable("KG103"))
	}
	if !c.ApproversSet() || !slices.Equal(c.Waivers.Approvers.Groups, []string{"platform"}) {
		t.Errorf("approvers not read: %+v", c.Waivers)
	}
	if d := Default(); d.ApproversSet() || d.Waivers.Approvers.Users == nil || d.Waivers.Approvers.Groups == nil {
		t.Errorf("by default nobody is named and the lists are empty, not null: %+v", d.Waivers)
	}
	// A waiver excuses the write that adds it only with approvers named,
	// or when asked to.
	allowed, err := Parse("karpgate.yaml", []byte("waivers:\n  allowSameWrite: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if Default().SameWriteWaivesDenials() || !c.SameWriteWaivesDenials() || !allowed.SameWriteWaivesDenials() {
		t.Errorf("SameWriteWaivesDenials: default %v, approvers %v, allowSameWrite %v; want false, true, true",
			Default().SameWriteWaivesDenials(), c.SameWriteWaivesDenials(), allowed.SameWriteWaivesDenials())
	}
	// Rules that judge waivers cannot be made waivable.
	err = c.CheckRuleIDs(func(string) bool { return true }, func(id string) bool { return id != "KG102" })
	var ce *Error
	if !errors.As(err, &ce) || ce.Path != "rules[KG102].waivable" || ce.Line != 7 || !strings.Contains(err.Error(), "no annotation can waive it") {
		t.Fatalf("waivable: true on an unwaivable rule: %v", err)
	}
}

func TestWaiverSettingsRejectBadNames(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"waivers:\n  approvers:\n    users: [\"\"]\n", `karpgate.yaml:3:13: waivers.approvers.users[0]: "" is not a user or group name`},
		{"waivers:\n  approvers:\n    groups: [ok, \" padded\"]\n", `waivers.approvers.groups[1]: " padded" is not a user or group name`},
		{"waivers:\n  approver: {}\n", `waivers.approver: unknown key "approver"`},
		{"rules:\n  KG101: {waivable: maybe}\n", `karpgate.yaml: yaml: unmarshal errors`},
	} {
		if _, err := Parse("karpgate.yaml", []byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.in, err, tt.want)
		}
	}
}
