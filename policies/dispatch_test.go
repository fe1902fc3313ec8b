package policies

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies/budgetfuncs"
	"github.com/karpgate/karpgate/policies/sandbox"
)

// The engine skips a query whose selection has no rules for the kind at
// the point (dispatchTable), so the table must say exactly what the
// dispatch data the queries read says: a selection the table calls empty
// while the data lists rules would lose those rules' findings.
func TestDispatchTableAgreesWithTheDispatchData(t *testing.T) {
	set, err := loadPolicySet(nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	compiler, err := sandbox.Compile(set.modules, budgetfuncs.Declarations())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	groups, _ := classifyRules(compiler, set.catalog, cfg, true)
	store, selected, err := newStore(set, cfg, groups, release.ForRelease(release.Newest(), true, "linked CRDs"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) map[string]any {
		v, err := storage.ReadOne(context.Background(), store, storage.MustParsePath(path))
		if err != nil {
			t.Fatal(err)
		}
		if value, isAST := v.(ast.Value); isAST {
			if v, err = ast.JSON(value); err != nil {
				t.Fatal(err)
			}
		}
		return v.(map[string]any)
	}
	dispatch := read("/karpgate/engine/dispatch")
	empty := 0
	check := func(selection string, point config.EnforcementPoint, kind string, keys []any) {
		if got, want := selected.has(selection, point, kind), len(keys) > 0; got != want {
			t.Errorf("%s at %s for %s: the table says rules %v, the dispatch data lists %v", selection, point, kind, got, keys)
		}
		if len(keys) == 0 {
			empty++
		}
	}
	for selection, byPoint := range dispatch {
		for _, point := range config.EnforcementPoints {
			for _, k := range karpenter.Kinds {
				check(selection, point, k.Kind, byPoint.(map[string]any)[string(point)].(map[string]any)[k.Kind].([]any))
			}
		}
	}
	if len(dispatch) < 5 || empty == 0 {
		t.Errorf("%d selections, %d of them empty somewhere: the test no longer sees what it checks", len(dispatch), empty)
	}
}
