package policies

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/golden"
)

var (
	fuzzEngineOnce sync.Once
	fuzzEngine     *Engine
)

// FuzzEvaluate feeds arbitrary manifests to the built-in rules, as the
// admission webhook will: whatever the object holds, evaluation must not
// panic or fail. Each object is also tried as every Karpenter kind and
// version so that malformed fields reach every rule. The seed corpus is
// every rule fixture.
func FuzzEvaluate(f *testing.F) {
	for _, s := range golden.Glob(f, "testdata/rules/*/*.yaml") {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, true)
	}
	f.Add([]byte(`{"spec": {"disruption": {"budgets": [{"nodes": 3, "schedule": ["x"], "duration": {}}]}}}`), false)
	f.Add([]byte("spec:\n  amiSelectorTerms: [{alias: 7}, \"x\", {alias: \"@\"}]\nmetadata:\n  annotations: {karpgate.io/waive-: 1}\n"), true)
	f.Add([]byte("spec:\n  disruption:\n    budgets:\n      - {nodes: \"1\", schedule: \"* * * * *\", duration: 1m}\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, production bool) {
		fuzzEngineOnce.Do(func() {
			var err error
			fuzzEngine, err = New(context.Background(), Options{Now: func() time.Time { return fixedNow }})
			if err != nil {
				panic(err)
			}
		})
		objects, err := manifest.ReadAll([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			return // not a manifest: lint reports parse errors before evaluating
		}
		builder := NewInventoryBuilder()
		for _, o := range objects {
			entry, err := fuzzEngine.NewInventoryEntry(o.Content)
			if err != nil {
				t.Fatalf("inventory: %v", err)
			}
			builder.Add(entry)
		}
		inventory := builder.Build()
		for _, object := range objects {
			o := object.Content
			for _, kind := range []string{"NodePool", "EC2NodeClass", "NodeClaim"} {
				for _, api := range []string{"karpenter.sh/v1", "karpenter.k8s.aws/v1beta1"} {
					o["kind"], o["apiVersion"] = kind, api
					if production {
						o["metadata"] = map[string]any{"name": "fuzz", "labels": map[string]any{"karpgate.io/environment": "production"}}
					}
					if _, err := fuzzEngine.Evaluate(context.Background(), Request{Object: o, Inventory: inventory, Point: config.Admission}); err != nil {
						t.Fatalf("%s %s: %v", api, kind, err)
					}
				}
			}
		}
	})
}

// FuzzCrossObjectSubjects checks that lint's streaming evaluation finds what
// evaluating every rule with whole objects finds: the rules that need no
// other object, plus the cross-object rules on subjects and an inventory
// reduced to the fields those rules read, give the same findings as all
// rules on whole objects with an inventory of whole objects. The seeds are
// the rule fixtures (the cross-object ones hold several objects).
func FuzzCrossObjectSubjects(f *testing.F) {
	for _, s := range golden.Glob(f, "testdata/rules/*/*.yaml") {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: old, annotations: {karpgate.io/waive-KG502: "split next sprint"}}
spec: {template: {spec: {nodeClassRef: {name: shared}, kubelet: {maxPods: 58}}}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: new, annotations: {compatibility.karpenter.sh/v1beta1-kubelet-conversion: '{"maxPods":110}'}}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: shared}}}}
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: claim, labels: {karpgate.io/environment: production}}
spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gone}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: "not an object"
spec: {template: "nor this"}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzEngineOnce.Do(func() {
			var err error
			fuzzEngine, err = New(context.Background(), Options{Now: func() time.Time { return fixedNow }})
			if err != nil {
				panic(err)
			}
		})
		e := fuzzEngine
		objects, err := manifest.ReadAll([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			return
		}
		wholeEngine := *e
		wholeEngine.wholeObjects = true
		reduced, whole := NewInventoryBuilder(), NewInventoryBuilder()
		for _, o := range objects {
			entry, err := e.NewInventoryEntry(o.Content)
			if err != nil {
				t.Fatal(err)
			}
			reduced.Add(entry)
			if entry, err = wholeEngine.NewInventoryEntry(o.Content); err != nil {
				t.Fatal(err)
			}
			whole.Add(entry)
		}
		reducedInventory, wholeInventory := reduced.Build(), whole.Build()
		ctx := context.Background()
		for _, o := range objects {
			if !Handles(o.APIVersion(), o.Kind()) {
				continue
			}
			want, err := e.Evaluate(ctx, Request{Object: o.Content, Inventory: wholeInventory})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Evaluate(ctx, Request{Object: o.Content, SkipCrossObject: true})
			if err != nil {
				t.Fatal(err)
			}
			if e.HasCrossObjectRules(o.Kind(), config.CI) {
				subject, err := e.NewSubject(o.Content)
				if err != nil {
					t.Fatal(err)
				}
				cross, err := e.EvaluateCrossObject(ctx, subject, reducedInventory, time.Time{}, config.CI)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range append(cross.Findings, cross.Waived...) {
					if f.Path != "" && !slices.Contains(e.CrossObjectPaths(), f.Path) {
						t.Errorf("%s: cross-object finding at %q, which CrossObjectPaths does not list", o.Ref(), f.Path)
					}
				}
				got.Findings = append(got.Findings, cross.Findings...)
				got.Waived = append(got.Waived, cross.Waived...)
				SortFindings(got.Findings)
				SortFindings(got.Waived)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: streaming evaluation found\n%v\nall rules on whole objects found\n%v", o.Ref(), got, want)
			}
		}
	})
}

var (
	memoEnginesOnce          sync.Once
	memoized, evaluatedEvery *Engine
)

// FuzzMemoizedRules checks the rule groups' memo: rules memoized by their
// footprint find what they find evaluated with every other rule each time,
// for any object of any kind, production or not, at instants on both sides
// of week boundaries and of budget windows, at both enforcement points, and
// so do the mutation rules, patches and all. The
// engines live across inputs, so an entry one input left must never answer
// for another.
func FuzzMemoizedRules(f *testing.F) {
	for _, s := range golden.Glob(f, "testdata/rules/*/*.yaml") {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, int64(0))
	}
	f.Add([]byte("spec:\n  disruption:\n    budgets:\n      - {nodes: \"0\", schedule: \"0 0 30 2 *\", duration: 1h}\n      - {nodes: \"1\", schedule: \"@daily\", duration: 0m}\n"), int64(3600))
	f.Add([]byte("spec:\n  disruption:\n    budgets:\n      - {nodes: \"0\", schedule: \"0 9 * * mon-fri\", duration: 8h, reasons: [Drifted]}\n"), int64(-86400*3))
	f.Add([]byte("spec: {amiFamily: AL2, amiSelectorTerms: [{alias: al2023@latest}, {name: \"ami-*\"}, {tags: {a: b}}], template: {spec: {nodeClassRef: {group: karpenter.k8s.aws/v1, name: x}, kubelet: {}}}, nodeClassRef: {name: y}}\n"), int64(7))
	// Floating AMI terms (KG109, KG110): odd types, several moving segments.
	f.Add([]byte("spec: {amiSelectorTerms: [{ssmParameter: /aws/service/ami-x-latest/current/recommended}, {ssmParameter: 3}, {tags: {a: \"*\", b: [\"*\"], c: 1}}, {name: [\"*\"]}, {tags: \"*\"}]}\n"), int64(0))
	// nodeClassRef's rules read its type, group and kind, not the rest.
	f.Add([]byte("spec: {template: {spec: {nodeClassRef: default, kubelet: null}}, nodeClassRef: null}\n---\nspec: {template: {spec: {nodeClassRef: {name: a, kind: 3}}}, nodeClassRef: [{group: x/y}]}\n---\nspec: {template: {spec: {nodeClassRef: {name: b, kind: 3}}}}\n"), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, shift int64) {
		memoEnginesOnce.Do(func() {
			var err error
			opts := Options{Now: func() time.Time { return fixedNow }}
			if memoized, err = New(context.Background(), opts); err != nil {
				panic(err)
			}
			opts.evaluateEveryRuleEveryTime = true
			if evaluatedEvery, err = New(context.Background(), opts); err != nil {
				panic(err)
			}
		})
		objects, err := manifest.ReadAll([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			return
		}
		instants := []time.Time{
			fixedNow,
			time.Date(2024, 6, 9, 23, 59, 59, 0, time.UTC), // Sunday night
			time.Date(2024, 6, 10, 0, 0, 0, 0, time.UTC),   // Monday: another span
			fixedNow.Add(time.Duration(shift%(400*24*3600)) * time.Second),
		}
		for _, o := range objects {
			for _, kind := range []string{"NodePool", "EC2NodeClass", "NodeClaim"} {
				for _, api := range []string{"karpenter.sh/v1", "karpenter.k8s.aws/v1beta1"} {
					o.Content["kind"], o.Content["apiVersion"] = kind, api
					for i, now := range instants {
						if i%2 == 1 {
							o.Content["metadata"] = map[string]any{"name": "fuzz", "labels": map[string]any{"karpgate.io/environment": "production"}}
						}
						// The validating rules at both points, and the mutating
						// webhook's: their patches are memoized with them.
						reqs := []Request{{Object: o.Content, Point: config.Admission, Operation: Create, MutationsOnly: true, Now: now}}
						for _, point := range config.EnforcementPoints {
							reqs = append(reqs, Request{Object: o.Content, Point: point, Now: now})
						}
						// An UPDATE from an object with nothing in it: the
						// groups are evaluated for every operation.
						empty := map[string]any{"apiVersion": api, "kind": kind}
						reqs = append(reqs, Request{Object: o.Content, OldObject: empty, Operation: Update, Point: config.Admission, Now: now},
							Request{Object: o.Content, OldObject: empty, Operation: Update, Point: config.Admission, MutationsOnly: true, Now: now})
						for _, req := range reqs {
							got, err := memoized.Evaluate(context.Background(), req)
							if err != nil {
								t.Fatal(err)
							}
							want, err := evaluatedEvery.Evaluate(context.Background(), req)
							if err != nil {
								t.Fatal(err)
							}
							if !reflect.DeepEqual(got, want) {
								t.Fatalf("%s %s at %s (%s, mutations only %v): memoized rules give\n%v\nevaluated every time\n%v", api, kind, now, req.Point, req.MutationsOnly, summary(got.Findings), summary(want.Findings))
							}
						}
					}
				}
			}
		}
	})
}
