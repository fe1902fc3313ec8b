package kubeletplan

import (
	"encoding/json"
	"testing"
)

func kubelet(maxPods int) map[string]any { return map[string]any{"maxPods": int64(maxPods)} }

func TestPlan(t *testing.T) {
	tests := []struct {
		name    string
		pools   []Pool
		classes []Class
		want    string // the plans as JSON
	}{{
		name:    "NodePools without a block of their own need nothing",
		pools:   []Pool{{Name: "a", Class: "default"}},
		classes: []Class{{Name: "default", Kubelet: kubelet(50)}},
		want:    `null`,
	}, {
		name:    "one block moves into an EC2NodeClass without kubelet",
		pools:   []Pool{{Name: "a", Class: "default", Kubelet: kubelet(110)}},
		classes: []Class{{Name: "default"}},
		want:    `[{"Class":"default","Missing":false,"Stay":null,"SetKubelet":{"maxPods":110},"SetFrom":"a","Keepers":["a"],"Move":["a"],"Copies":null}]`,
	}, {
		name:    "NodePools that agree share the EC2NodeClass, whatever the key order",
		pools:   []Pool{{Name: "b", Class: "default", Kubelet: map[string]any{"maxPods": int64(110), "podsPerCore": int64(2)}}, {Name: "a", Class: "default", Kubelet: map[string]any{"podsPerCore": int64(2), "maxPods": int64(110)}}},
		classes: []Class{{Name: "default"}},
		want:    `[{"Class":"default","Missing":false,"Stay":null,"SetKubelet":{"maxPods":110,"podsPerCore":2},"SetFrom":"a","Keepers":["a","b"],"Move":["a","b"],"Copies":null}]`,
	}, {
		name: "the group already running with the EC2NodeClass's kubelet keeps it; others split off",
		pools: []Pool{
			{Name: "a", Class: "default", Kubelet: kubelet(110)},
			{Name: "b", Class: "default"},
			{Name: "c", Class: "default", Kubelet: kubelet(50)},
			{Name: "d", Class: "default", Kubelet: kubelet(110)},
		},
		classes: []Class{{Name: "default", Kubelet: kubelet(50)}},
		want:    `[{"Class":"default","Missing":false,"Stay":null,"SetKubelet":null,"SetFrom":"","Keepers":["b","c"],"Move":["c"],"Copies":[{"Name":"default-a","Kubelet":{"maxPods":110},"From":"a","Pools":["a","d"]}]}]`,
	}, {
		name: "without such a group the alphabetically first NodePool's group keeps it",
		pools: []Pool{
			{Name: "z", Class: "default", Kubelet: kubelet(30)},
			{Name: "m", Class: "default", Kubelet: kubelet(20)},
		},
		classes: []Class{{Name: "default"}},
		want:    `[{"Class":"default","Missing":false,"Stay":null,"SetKubelet":{"maxPods":20},"SetFrom":"m","Keepers":["m"],"Move":["m"],"Copies":[{"Name":"default-z","Kubelet":{"maxPods":30},"From":"z","Pools":["z"]}]}]`,
	}, {
		name: "a copy's name that is taken gets a short hash",
		pools: []Pool{
			{Name: "a", Class: "default"},
			{Name: "b", Class: "default", Kubelet: kubelet(30)},
		},
		classes: []Class{{Name: "default"}, {Name: "default-b"}},
		want:    `[{"Class":"default","Missing":false,"Stay":null,"SetKubelet":null,"SetFrom":"","Keepers":["a"],"Move":null,"Copies":[{"Name":"default-b-79dcf1","Kubelet":{"maxPods":30},"From":"b","Pools":["b"]}]}]`,
	}, {
		name:  "an unknown EC2NodeClass leaves the blocks where they are",
		pools: []Pool{{Name: "a", Class: "gone", Kubelet: kubelet(30)}, {Name: "b", Class: "gone"}},
		want:  `[{"Class":"gone","Missing":true,"Stay":["a"],"SetKubelet":null,"SetFrom":"","Keepers":null,"Move":null,"Copies":null}]`,
	}, {
		name: "classes come in the order the NodePools first name them",
		pools: []Pool{
			{Name: "x", Class: "second", Kubelet: kubelet(1)},
			{Name: "a", Class: "first", Kubelet: kubelet(2)},
		},
		classes: []Class{{Name: "first"}, {Name: "second"}},
		want: `[{"Class":"second","Missing":false,"Stay":null,"SetKubelet":{"maxPods":1},"SetFrom":"x","Keepers":["x"],"Move":["x"],"Copies":null},` +
			`{"Class":"first","Missing":false,"Stay":null,"SetKubelet":{"maxPods":2},"SetFrom":"a","Keepers":["a"],"Move":["a"],"Copies":null}]`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(Plan(tt.pools, tt.classes))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestChanges(t *testing.T) {
	if (ClassPlan{Class: "x", Missing: true, Stay: []string{"a"}}).Changes() {
		t.Error("a plan that leaves everything in place reports changes")
	}
	if !(ClassPlan{Class: "x", Move: []string{"a"}}).Changes() {
		t.Error("a plan that moves a block reports no changes")
	}
}
