package policies

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// FuzzProjectionKey: two values share a memo key exactly when the rules
// would see the same reduced input; a key shared by different reductions
// would hand one object's violations to another.
func FuzzProjectionKey(f *testing.F) {
	seeds := []string{
		`{"spec": {"disruption": {"budgets": [{"nodes": "0"}]}}, "kind": "NodePool"}`,
		`{"spec": {"disruption": {"budgets": [{"nodes": "0"}], "x": 1}}, "kind": "NodePool"}`,
		`{"spec": {"disruption": "budgets"}}`,
		`{"spec": "x"}`,
		`{"spec": {"disruption": {}}}`,
		`{"spec": {}}`,
		`{}`,
		`{"spec": {"amiFamily": {"a": 1}}}`,
		`{"spec": {"amiFamily": "AL2", "disruption": null}}`,
		`{"apiVersion": "v1", "kind": ["NodePool"]}`,
	}
	for i := range seeds {
		f.Add(seeds[i], seeds[(i+1)%len(seeds)])
	}
	p := newProjection([][]string{{"kind"}, {"apiVersion"}, {"spec", "disruption", "budgets"}, {"spec", "disruption"}}, [][]string{{"spec", "amiFamily"}, {"spec"}})
	f.Fuzz(func(t *testing.T, a, b string) {
		va, errA := ast.ParseTerm(a)
		vb, errB := ast.ParseTerm(b)
		if errA != nil || errB != nil || !va.IsGround() || !vb.IsGround() {
			return
		}
		if _, ok := va.Value.(ast.Object); !ok {
			return // the engine reduces input documents, always objects
		}
		if _, ok := vb.Value.(ast.Object); !ok {
			return
		}
		sameKey := string(p.appendKey(nil, va.Value)) == string(p.appendKey(nil, vb.Value))
		sameReduction := p.reduce(va.Value).Compare(p.reduce(vb.Value)) == 0
		if sameKey != sameReduction {
			t.Fatalf("%s and %s: same key %v, same reduction %v (%v, %v)", a, b, sameKey, sameReduction, p.reduce(va.Value), p.reduce(vb.Value))
		}
	})
}
