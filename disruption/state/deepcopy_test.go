package state

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// TestDeepCopySharesNoMemory fills every type the loop caches with random
// values, copies it, then writes into every string, number, slice element
// and map entry reachable from the copy. The original must not change: the
// deep copies are written by hand, and one shared slice or map would let a
// reconcile corrupt the informer's cache.
func TestDeepCopySharesNoMemory(t *testing.T) {
	objects := map[string]func() runtime.Object{
		"NodePool":                func() runtime.Object { return &NodePool{} },
		"NodePoolList":            func() runtime.Object { return &NodePoolList{} },
		"NodeClaim":               func() runtime.Object { return &NodeClaim{} },
		"NodeClaimList":           func() runtime.Object { return &NodeClaimList{} },
		"EC2NodeClass":            func() runtime.Object { return &EC2NodeClass{} },
		"EC2NodeClassList":        func() runtime.Object { return &EC2NodeClassList{} },
		"Pod":                     func() runtime.Object { return &Pod{} },
		"PodList":                 func() runtime.Object { return &PodList{} },
		"PodDisruptionBudget":     func() runtime.Object { return &PodDisruptionBudget{} },
		"PodDisruptionBudgetList": func() runtime.Object { return &PodDisruptionBudgetList{} },
	}
	for name, newObject := range objects {
		t.Run(name, func(t *testing.T) {
			for seed := int64(0); seed < 50; seed++ {
				original := newObject()
				filler(seed).Fill(original)
				before := marshal(t, original)
				copied := original.DeepCopyObject()
				if got := marshal(t, copied); got != before {
					t.Fatalf("seed %d: the copy differs from the original\n%s\n%s", seed, got, before)
				}
				scribble(reflect.ValueOf(copied))
				if after := marshal(t, original); after != before {
					t.Fatalf("seed %d: writing into the copy changed the original:\nbefore %s\nafter  %s", seed, before, after)
				}
			}
		})
	}
}

// filler fills everything (no nils, at least one element per slice and map)
// and gives budgets the JSON values the API server decodes them to.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0).NumElements(1, 3).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(int64(c.Uint32()), resource.DecimalSI)
		},
		func(budgets *[]any, c randfill.Continue) {
			*budgets = []any{map[string]any{
				"nodes":   c.String(4),
				"reasons": []any{c.String(6), c.String(6)},
				"nested":  map[string]any{"n": float64(c.Uint64() % 100)},
			}}
		},
		// Managed fields and owner references are copied by apimachinery's
		// own generated code; times only need to survive JSON.
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			c.FillNoCustom(m)
			m.ManagedFields, m.OwnerReferences = nil, nil
			m.CreationTimestamp, m.DeletionTimestamp = metav1.Unix(int64(c.Uint64()%1e9), 0), nil
		},
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(int64(c.Uint64()%1e9), 0) },
	)
}

func marshal(t *testing.T, o any) string {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scribble changes every value reachable from v in place: strings, numbers
// and booleans, through pointers, slice elements, map values and
// interfaces.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			elem := v.Elem()
			if v.Kind() == reflect.Interface {
				// An interface holds an unaddressable copy: scribble a
				// copy of its value and put it back.
				cp := reflect.New(elem.Type()).Elem()
				cp.Set(elem)
				scribble(cp)
				if v.CanSet() {
					v.Set(cp)
				}
				if elem.Kind() == reflect.Map || elem.Kind() == reflect.Slice {
					scribble(elem) // maps and slices share storage: reach it
				}
				return
			}
			scribble(elem)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			val := reflect.New(v.Type().Elem()).Elem()
			val.Set(v.MapIndex(k))
			scribble(val)
			v.SetMapIndex(k, val)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "-scribbled")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(v.Int() + 1)
		}
	case reflect.Float32, reflect.Float64:
		if v.CanSet() {
			v.SetFloat(v.Float() + 1)
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	}
}
