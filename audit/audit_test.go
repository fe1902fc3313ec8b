package audit

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/test/corpus"
)

var now = time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)

func engine(t testing.TB, karpgateYAML string) *policies.Engine {
	t.Helper()
	cfg, err := config.Parse("karpgate.yaml", []byte(karpgateYAML))
	if err != nil {
		t.Fatal(err)
	}
	e, err := policies.New(context.Background(), policies.Options{Config: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func decode(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func ruleIDs(fs []policies.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Action)+" "+f.RuleID)
	}
	return out
}

func TestJudgeAtTheAdmissionPoint(t *testing.T) {
	objects := corpus.StoredCluster(7, 2, 1)
	inv := NewInventory(engine(t, ""))
	for _, raw := range objects {
		o := decode(t, raw)
		if _, err := inv.Set(o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string), o); err != nil {
			t.Fatal(err)
		}
	}
	latest := decode(t, objects[6]) // class-6: dev, @latest
	for _, tt := range []struct {
		name, config string
		want         []string
	}{
		{"defaults", "", []string{"warn KG102"}},
		{"switched to deny", "rules:\n  KG102: {severity: deny}\n", []string{"deny KG102"}},
		{"deny in CI only", "rules:\n  KG102: {actions: {ci: deny}}\n", []string{"warn KG102"}},
		{"rolled out as audit", "rules:\n  KG102: {actions: {admission: audit}}\n", []string{"audit KG102"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := engine(t, tt.config)
			v, err := Judge(context.Background(), e, inv.Current(), latest, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := ruleIDs(v.Findings); !slices.Equal(got, tt.want) {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
			if v.Kind != "EC2NodeClass" || v.Name != "class-6" || v.UID == "" {
				t.Errorf("identity %+v", v)
			}
			var passed []string
			for _, r := range v.Passed {
				passed = append(passed, r.ID)
				if r.ID == "KG102" || r.Mutates || len(r.Operations) > 0 || r.ReportsSchema() {
					t.Errorf("passed lists %s, which found something or cannot judge a stored object", r.ID)
				}
			}
			if !slices.Contains(passed, "KG101") || !slices.Contains(passed, "KG001") {
				t.Errorf("passed %v lacks KG101 and KG001", passed)
			}
		})
	}
}

// TestJudgeRunsTheCrossObjectRulesOnTheWholeCluster: a NodePool naming an
// EC2NodeClass the cluster lacks is reported (KG501); the same NodePool
// passes once the class is stored.
func TestJudgeRunsTheCrossObjectRulesOnTheWholeCluster(t *testing.T) {
	e := engine(t, "")
	objects := corpus.StoredCluster(2, 3, 0) // pool-2 names class-0; pools name class-(p%2)
	pool := decode(t, objects[4])            // pool-2
	pool["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeClassRef"].(map[string]any)["name"] = "class-9"
	inv := NewInventory(e)
	for _, raw := range objects {
		o := decode(t, raw)
		if _, err := inv.Set(o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string), o); err != nil {
			t.Fatal(err)
		}
	}
	v, err := Judge(context.Background(), e, inv.Current(), pool, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := ruleIDs(v.Findings); !slices.Equal(got, []string{"warn KG501"}) || !strings.Contains(v.Findings[0].Message, `"class-9"`) {
		t.Fatalf("findings %v", v.Findings)
	}
	class9 := decode(t, objects[0])
	class9["metadata"].(map[string]any)["name"] = "class-9"
	if changed, _ := inv.Set("EC2NodeClass/class-9", class9); !changed {
		t.Fatal("a new class left the inventory unchanged")
	}
	if changed, _ := inv.Set("EC2NodeClass/class-9", class9); changed {
		t.Fatal("the same class again changed the inventory")
	}
	if v, err = Judge(context.Background(), e, inv.Current(), pool, now); err != nil || len(v.Findings) != 0 {
		t.Fatalf("with the class stored: %v %v", v.Findings, err)
	}
	if !inv.Delete("EC2NodeClass/class-9") || inv.Delete("EC2NodeClass/class-9") {
		t.Fatal("Delete does not report what it removed")
	}
	// Without an inventory the cross-object rules are left out, not passed.
	if v, err = Judge(context.Background(), e, nil, pool, now); err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Passed {
		if r.ID == "KG501" {
			t.Error("KG501 passed without an inventory to judge by")
		}
	}
}

func TestJudgeListsWaivedFindingsWithTheirWaiver(t *testing.T) {
	e := engine(t, "")
	o := decode(t, corpus.StoredCluster(7, 0, 0)[6])
	o["metadata"].(map[string]any)["annotations"] = map[string]any{
		"karpgate.io/waive-KG102":    "until 2026-03-31: dev account",
		"karpgate.io/waivers-set-by": `{"KG102":{"user":"alice","at":"2026-01-02T00:00:00Z"}}`,
	}
	v, err := Judge(context.Background(), e, nil, o, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Findings) != 0 || len(v.Waived) != 1 || v.Waived[0].WaiverSetBy != "alice" || v.Waived[0].WaiverUntil == nil {
		t.Fatalf("findings %v waived %+v", v.Findings, v.Waived)
	}
	// After the expiry the finding is back, with KG003.
	v, err = Judge(context.Background(), e, nil, o, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if got := ruleIDs(v.Findings); !slices.Equal(got, []string{"warn KG003", "warn KG102"}) {
		t.Fatalf("after the expiry: %v", got)
	}
}

// TestInventoryReadsTheSameWhateverTheOrder: a rule that reads the
// inventory's lists (here a --policy rule listing the NodePools of a class)
// finds the same whatever order the objects were stored in, so that a
// report does not change when nothing did.
func TestInventoryReadsTheSameWhateverTheOrder(t *testing.T) {
	e, err := policies.New(context.Background(), policies.Options{PolicyDirs: []string{"testdata/listpools"}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	objects := corpus.StoredCluster(1, 6, 0)
	judge := func(order []int) string {
		inv := NewInventory(e)
		for _, i := range order {
			o := decode(t, objects[i])
			if _, err := inv.Set(o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string), o); err != nil {
				t.Fatal(err)
			}
		}
		v, err := Judge(context.Background(), e, inv.Current(), decode(t, objects[1]), now)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range v.Findings {
			if f.RuleID == "ORDER1" {
				return f.Message
			}
		}
		t.Fatalf("ORDER1 not found: %v", v.Findings)
		return ""
	}
	first := judge([]int{0, 1, 2, 3, 4, 5, 6})
	if first != "pool-0,pool-1,pool-2,pool-3,pool-4,pool-5" {
		t.Fatalf("listed %q", first)
	}
	for _, order := range [][]int{{6, 5, 4, 3, 2, 1, 0}, {3, 0, 6, 1, 5, 2, 4}} {
		if again := judge(order); again != first {
			t.Errorf("order %v listed %q, want %q", order, again, first)
		}
	}
}
