package state

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// Pool is everything the disruption status of one NodePool depends on.
type Pool struct {
	NodePool *NodePool
	// NodeClaims and Nodes carry the pool's karpenter.sh/nodepool label.
	NodeClaims []*NodeClaim
	Nodes      []*corev1.Node
	// NodeClasses holds the EC2NodeClasses the template and the NodeClaims
	// reference, by name; a missing one is simply absent.
	NodeClasses map[string]*EC2NodeClass
	// Pods holds, by node name, the pods of the nodes whose pods matter:
	// the drifted ones, for status. Nodes left out have no entry.
	Pods map[string][]*Pod
	// PDBs are the PodDisruptionBudgets that may select those pods.
	PDBs PDBsByNamespace
}

// Snapshot is the watched objects at one moment, however they were read:
// from the loop's caches or from one round of List calls.
type Snapshot struct {
	NodePools   []*NodePool
	NodeClaims  []*NodeClaim
	Nodes       []*corev1.Node
	NodeClasses []*EC2NodeClass
	// Pods are by node name, for the nodes List reads pods of; PDBs are all
	// of the cluster's PodDisruptionBudgets.
	Pods map[string][]*Pod
	PDBs []*PodDisruptionBudget
}

// Pools groups the snapshot by NodePool, sorted by name. NodeClaims and Nodes
// whose pool does not exist belong to no group.
func (s Snapshot) Pools() []Pool {
	byName := make(map[string]*Pool, len(s.NodePools))
	for _, np := range s.NodePools {
		byName[np.Name] = &Pool{NodePool: np}
	}
	for _, nc := range s.NodeClaims {
		if p := byName[nc.Labels[karpenter.NodePoolLabel]]; p != nil {
			p.NodeClaims = append(p.NodeClaims, nc)
		}
	}
	for _, n := range s.Nodes {
		if p := byName[n.Labels[karpenter.NodePoolLabel]]; p != nil {
			p.Nodes = append(p.Nodes, n)
		}
	}
	classes := make(map[string]*EC2NodeClass, len(s.NodeClasses))
	for _, c := range s.NodeClasses {
		classes[c.Name] = c
	}
	pdbs := GroupPDBs(s.PDBs)
	out := make([]Pool, 0, len(byName))
	for _, p := range byName {
		p.PDBs = pdbs
		p.Pods = map[string][]*Pod{}
		for _, n := range p.Nodes {
			if pods, ok := s.Pods[n.Name]; ok {
				p.Pods[n.Name] = pods
			}
		}
		p.NodeClasses = map[string]*EC2NodeClass{}
		for _, name := range p.NodeClassNames() {
			if c, ok := classes[name]; ok {
				p.NodeClasses[name] = c
			}
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodePool.Name < out[j].NodePool.Name })
	return out
}

// NodeClassNames lists the EC2NodeClasses the pool's template and NodeClaims
// reference, without repeats.
func (p Pool) NodeClassNames() []string {
	seen := map[string]bool{}
	var names []string
	add := func(ref NodeClassRef) {
		if !IsEC2NodeClass(ref) || seen[ref.Name] {
			return
		}
		seen[ref.Name] = true
		names = append(names, ref.Name)
	}
	add(p.NodePool.Spec.Template.Spec.NodeClassRef)
	for _, nc := range p.NodeClaims {
		add(nc.Spec.NodeClassRef)
	}
	return names
}

// IsEC2NodeClass reports whether ref names an EC2NodeClass. An empty group
// or kind counts: v1 defaults them, older objects may lack them.
func IsEC2NodeClass(ref NodeClassRef) bool {
	return ref.Name != "" &&
		(ref.Group == "" || ref.Group == karpenter.AWSGroup) &&
		(ref.Kind == "" || ref.Kind == karpenter.KindEC2NodeClass)
}
