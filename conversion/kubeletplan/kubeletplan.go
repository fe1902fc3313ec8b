package kubeletplan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
)

// Pool is a NodePool that names an EC2NodeClass.
type Pool struct {
	Name string
	// Class is the name of the EC2NodeClass its nodeClassRef names.
	Class string
	// Kubelet is the block it carries itself; nil when it has none and runs
	// with its EC2NodeClass's.
	Kubelet map[string]any
}

// Class is an EC2NodeClass.
type Class struct {
	Name string
	// Kubelet is its spec.kubelet; nil when it has none.
	Kubelet map[string]any
}

// ClassPlan is what happens around one EC2NodeClass its NodePools name.
type ClassPlan struct {
	Class string
	// Missing: the EC2NodeClass is unknown, so the NodePools in Stay keep
	// their block where it is.
	Missing bool
	Stay    []string
	// SetKubelet, when not nil, becomes the EC2NodeClass's spec.kubelet; it
	// is the block of NodePool SetFrom.
	SetKubelet map[string]any
	SetFrom    string
	// Keepers stay on the EC2NodeClass and run with its (new) kubelet; Move
	// are those of them whose own block is dropped because the EC2NodeClass
	// now holds the same.
	Keepers []string
	Move    []string
	// Copies are the new EC2NodeClasses split off for NodePools whose block
	// differs from the keepers'.
	Copies []Copy
}

// Copy is a new EC2NodeClass: a copy of the class with another kubelet.
type Copy struct {
	Name    string
	Kubelet map[string]any
	// From is the NodePool whose block the copy holds; Pools are repointed
	// to the copy and drop their own block.
	From  string
	Pools []string
}

// Changes reports whether the plan changes anything for this class.
func (c ClassPlan) Changes() bool {
	return c.SetKubelet != nil || len(c.Move) > 0 || len(c.Copies) > 0
}

// Plan places the kubelet blocks of pools. classes are every EC2NodeClass
// known (their names are taken for copies); pools without a block of their
// own matter only because they run with their EC2NodeClass's kubelet. Class
// plans come in the order the pools first name the classes, and only for
// classes with at least one pool that carries a block.
func Plan(pools []Pool, classes []Class) []ClassPlan {
	byName := map[string]*Class{}
	taken := map[string]bool{}
	for i := range classes {
		taken[classes[i].Name] = true
		if byName[classes[i].Name] == nil {
			byName[classes[i].Name] = &classes[i]
		}
	}
	byClass := map[string][]Pool{}
	var order []string
	for _, p := range pools {
		if byClass[p.Class] == nil {
			order = append(order, p.Class)
		}
		byClass[p.Class] = append(byClass[p.Class], p)
	}
	var plans []ClassPlan
	for _, name := range order {
		if plan, ok := planClass(name, byName[name], byClass[name], taken); ok {
			plans = append(plans, plan)
		}
	}
	return plans
}

type group struct {
	key   string
	pools []Pool
}

func (g *group) own() *Pool {
	for i := range g.pools {
		if g.pools[i].Kubelet != nil {
			return &g.pools[i]
		}
	}
	return nil
}

func planClass(name string, class *Class, pools []Pool, taken map[string]bool) (ClassPlan, bool) {
	plan := ClassPlan{Class: name}
	anyOwn := false
	for _, p := range pools {
		anyOwn = anyOwn || p.Kubelet != nil
	}
	if !anyOwn {
		return plan, false
	}
	sort.SliceStable(pools, func(i, j int) bool { return pools[i].Name < pools[j].Name })
	if class == nil {
		plan.Missing = true
		for _, p := range pools {
			if p.Kubelet != nil {
				plan.Stay = append(plan.Stay, p.Name)
			}
		}
		return plan, true
	}
	baseKey := Canonical(class.Kubelet)
	groups := map[string]*group{}
	var order []*group
	for _, p := range pools {
		key := baseKey
		if p.Kubelet != nil {
			key = Canonical(p.Kubelet)
		}
		g := groups[key]
		if g == nil {
			g = &group{key: key}
			groups[key] = g
			order = append(order, g)
		}
		g.pools = append(g.pools, p)
	}
	keeper := order[0]
	if g, ok := groups[baseKey]; ok {
		keeper = g
	}
	if keeper.key != baseKey {
		from := keeper.own()
		plan.SetKubelet, plan.SetFrom = from.Kubelet, from.Name
	}
	for _, p := range keeper.pools {
		plan.Keepers = append(plan.Keepers, p.Name)
		if p.Kubelet != nil {
			plan.Move = append(plan.Move, p.Name)
		}
	}
	for _, g := range order {
		if g == keeper {
			continue
		}
		from := g.own()
		c := Copy{Name: uniqueName(name+"-"+g.pools[0].Name, g.key, taken), Kubelet: from.Kubelet, From: from.Name}
		for _, p := range g.pools {
			c.Pools = append(c.Pools, p.Name)
		}
		plan.Copies = append(plan.Copies, c)
	}
	return plan, true
}

// Canonical is a kubelet block as JSON with sorted keys: equal blocks give
// equal strings whatever their key order. nil gives "".
func Canonical(m map[string]any) string {
	if m == nil {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Sprint(m)
	}
	return string(b)
}

// uniqueName returns want, or want with a short hash of the kubelet block
// when an EC2NodeClass of that name exists already.
func uniqueName(want, kubeletKey string, taken map[string]bool) string {
	name := want
	for i := 0; taken[name]; i++ {
		sum := sha256.Sum256([]byte(fmt.Sprint(kubeletKey, i)))
		name = fmt.Sprintf("%s-%s", want, hex.EncodeToString(sum[:3]))
	}
	taken[name] = true
	return name
}
