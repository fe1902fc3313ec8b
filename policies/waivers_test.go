package policies

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/waiver"
)

func mustConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("karpgate.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestWaiverExpiry: a waiver waives until its expiry (the end of the day,
// UTC, for a date), then KG003 reports it and the rule applies again.
func TestWaiverExpiry(t *testing.T) {
	e := newTestEngine(t, Options{})
	for _, tt := range []struct {
		name, value string
		now         time.Time
		waived      bool
		active      []string
	}{
		{"before the day", "until 2024-06-05: migrating", fixedNow, true, nil},
		{"last second of the day", "until 2024-06-05: migrating", time.Date(2024, 6, 5, 23, 59, 59, 0, time.UTC), true, nil},
		{"the day after", "until 2024-06-05: migrating", time.Date(2024, 6, 6, 0, 0, 0, 0, time.UTC), false,
			[]string{"KG003 warn metadata.annotations[karpgate.io/waive-KG101]", "KG101 deny spec.amiSelectorTerms[0].alias"}},
		{"an instant passed", "until 2024-06-05T11:00:00Z: migrating", fixedNow, false,
			[]string{"KG003 warn metadata.annotations[karpgate.io/waive-KG101]", "KG101 deny spec.amiSelectorTerms[0].alias"}},
		{"unreadable expiry", "until 5 June: migrating", fixedNow, false,
			[]string{"KG004 warn metadata.annotations[karpgate.io/waive-KG101]", "KG101 deny spec.amiSelectorTerms[0].alias"}},
		{"expiry without reason", "until 2030-01-01:", fixedNow, false,
			[]string{"KG001 warn metadata.annotations[karpgate.io/waive-KG101]", "KG101 deny spec.amiSelectorTerms[0].alias"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := nodeClass(production, map[string]any{"karpgate.io/waive-KG101": tt.value}, "al2023@latest")
			res, err := e.Evaluate(context.Background(), Request{Object: obj, Now: tt.now})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res.Findings); !slices.Equal(got, tt.active) {
				t.Errorf("active: %v, want %v", got, tt.active)
			}
			if (len(res.Waived) == 1) != tt.waived {
				t.Errorf("waived: %v, want waived=%v", summary(res.Waived), tt.waived)
			}
			if tt.waived && (res.Waived[0].WaiverUntil == nil || res.Waived[0].WaiverReason != "migrating") {
				t.Errorf("the waived finding lacks the expiry or reason: %+v", res.Waived[0])
			}
		})
	}
}

func TestWaiverCarriesWhoSetIt(t *testing.T) {
	e := newTestEngine(t, Options{})
	obj := nodeClass(production, map[string]any{
		"karpgate.io/waive-KG101": "pinned next sprint",
		waiver.RecordAnnotation:   `{"KG101":{"user":"alice@example.com","at":"2024-06-01T08:00:00Z"}}`,
	}, "al2023@latest")
	res, err := e.Evaluate(context.Background(), Request{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Waived) != 1 || res.Waived[0].WaiverSetBy != "alice@example.com" || res.Waived[0].WaiverUntil != nil {
		t.Fatalf("waived: %+v", res.Waived)
	}
}

// TestConfigMakesARuleUnwaivable: rules.<ID>.waivable: false leaves the
// finding active and reports the waiver (KG005); making a waiver rule
// waivable is refused.
func TestConfigMakesARuleUnwaivable(t *testing.T) {
	e := newTestEngine(t, Options{Config: mustConfig(t, "rules:\n  KG101: {waivable: false}\n")})
	obj := nodeClass(production, map[string]any{"karpgate.io/waive-KG101": "please"}, "al2023@latest")
	res, err := e.Evaluate(context.Background(), Request{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"KG005 warn metadata.annotations[karpgate.io/waive-KG101]", "KG101 deny spec.amiSelectorTerms[0].alias"}
	if got := summary(res.Findings); !slices.Equal(got, want) || len(res.Waived) != 0 {
		t.Fatalf("active %v waived %v, want %v and none waived", got, summary(res.Waived), want)
	}
	if !strings.Contains(res.Findings[0].Message, "karpgate.yaml sets rules.KG101.waivable to false") {
		t.Errorf("KG005 does not say why: %s", res.Findings[0].Message)
	}
	_, err = New(context.Background(), Options{Config: mustConfig(t, "rules:\n  KG001: {waivable: true}\n")})
	if err == nil || !strings.Contains(err.Error(), "rules[KG001].waivable: KG001 judges waivers themselves") {
		t.Fatalf("waivable KG001: %v", err)
	}
}

// TestWaiverApprovers: with approvers named, KG006 denies an admission
// request whose user adds or changes a waiver and is not named; unchanged
// waivers, removals, approvers, lint and the audit (no user) are quiet.
func TestWaiverApprovers(t *testing.T) {
	e := newTestEngine(t, Options{Config: mustConfig(t, "waivers:\n  approvers:\n    users: [alice]\n    groups: [platform]\n")})
	waived := func(reason string) map[string]any {
		return nodeClass(nil, map[string]any{"karpgate.io/waive-KG102": reason}, "al2023@latest")
	}
	plain := nodeClass(nil, nil, "al2023@latest")
	mallory := &UserInfo{Username: "mallory", Groups: []string{"system:authenticated"}}
	for _, tt := range []struct {
		name   string
		req    Request
		denied bool
	}{
		{"add on create", Request{Object: waived("x"), Operation: Create, UserInfo: mallory}, true},
		{"add on update", Request{Object: waived("x"), OldObject: plain, Operation: Update, UserInfo: mallory}, true},
		{"change the reason", Request{Object: waived("y"), OldObject: waived("x"), Operation: Update, UserInfo: mallory}, true},
		{"leave it as it was", Request{Object: waived("x"), OldObject: waived("x"), Operation: Update, UserInfo: mallory}, false},
		{"remove it", Request{Object: plain, OldObject: waived("x"), Operation: Update, UserInfo: mallory}, false},
		{"an approver by name", Request{Object: waived("x"), Operation: Create, UserInfo: &UserInfo{Username: "alice"}}, false},
		{"an approver by group", Request{Object: waived("x"), Operation: Create, UserInfo: &UserInfo{Username: "bob", Groups: []string{"platform"}}}, false},
		{"lint", Request{Object: waived("x")}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Point = config.Admission
			if tt.req.Operation == "" {
				tt.req.Point = config.CI
			}
			res, err := e.Evaluate(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var kg006 []Finding
			for _, f := range res.Denials() {
				if f.RuleID == "KG006" {
					kg006 = append(kg006, f)
				}
			}
			if (len(kg006) > 0) != tt.denied {
				t.Fatalf("KG006 denials %v, want denied=%v", summary(kg006), tt.denied)
			}
			if tt.denied && kg006[0].Message != "mallory may not add or change the waiver for KG102: karpgate.yaml names who may (waivers.approvers)" {
				t.Errorf("message: %s", kg006[0].Message)
			}
		})
	}
}

func TestAuditActionIsListedApart(t *testing.T) {
	e := newTestEngine(t, Options{Config: mustConfig(t, "rules:\n  KG102: {actions: {admission: audit}}\n")})
	obj := nodeClass(nil, nil, "al2023@latest")
	for _, tt := range []struct {
		point  config.EnforcementPoint
		audits []string
	}{
		{config.Admission, []string{"KG102 audit spec.amiSelectorTerms[0].alias"}},
		{config.CI, nil},
	} {
		res, err := e.Evaluate(context.Background(), Request{Object: obj, Point: tt.point})
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(res.Audits()); !slices.Equal(got, tt.audits) {
			t.Errorf("%s: audits %v, want %v", tt.point, got, tt.audits)
		}
		if res.Denied() {
			t.Errorf("%s: denied", tt.point)
		}
	}
}
