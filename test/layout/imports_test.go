package layout

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// Modules only the manifest generator (install/, driven by `make
// manifests` through karpgate-dev) needs: their API types build the
// checked-in manifests, and nothing a user runs reads them.
var generatorOnlyModules = []string{
	"github.com/cert-manager/cert-manager",
	"github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring",
	"github.com/prometheus/prometheus",
	// hack/apigen generates api/karpgate's deepcopy and CRD with it.
	"sigs.k8s.io/controller-tools",
}

// The shipped binary links what its users' commands need and no more: not
// the generator, its API modules, or the local-cluster harness.
func TestShippedBinaryLinksNoGenerator(t *testing.T) {
	lines := goList(t, "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}", module+"/cmd/karpgate")
	if len(lines) < 100 {
		t.Fatalf("go list -deps found only %d packages", len(lines))
	}
	for _, line := range lines {
		pkg, mod, _ := strings.Cut(line, " ")
		if slices.Contains(generatorOnlyModules, mod) {
			t.Errorf("cmd/karpgate links %s from generator-only module %s", pkg, mod)
		}
		for _, tree := range []string{"/install", "/internal/devcluster", "/cmd/karpgate-dev", "/release", "/config/jsonschema"} {
			if pkg == module+tree || strings.HasPrefix(pkg, module+tree+"/") {
				t.Errorf("cmd/karpgate links %s", pkg)
			}
		}
	}
}

// projectImports maps every package of the module to the project packages
// its non-test files import.
func projectImports(t *testing.T) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	for _, line := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module+"/")
		imports[pkg] = nil
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
	}
	if len(imports) < 30 {
		t.Fatalf("go list found only %d packages", len(imports))
	}
	return imports
}

// test/ holds tests and their helpers: code outside it may import them
// from _test.go files only, so no shipped or developer binary links them.
func TestOnlyTestsImportTestPackages(t *testing.T) {
	for pkg, imps := range projectImports(t) {
		if pkg == "test" || strings.HasPrefix(pkg, "test/") {
			continue
		}
		for _, imp := range imps {
			if strings.HasPrefix(imp, "test/") {
				t.Errorf("%s imports %s outside its tests", pkg, imp)
			}
		}
	}
}

// topFolder is the repository folder a package sits in: "cmd" for
// cmd/karpgate/app, "policies" for policies/policywatch.
func topFolder(pkg string) string {
	top, _, _ := strings.Cut(pkg, "/")
	return top
}

// Arrows between top-level folders point one way: no folder imports,
// through any chain of non-test imports, a folder that imports it back.
func TestNoFolderCycle(t *testing.T) {
	edges := map[string]map[string][]string{} // from -> to -> "pkg -> imp" examples
	for pkg, imps := range projectImports(t) {
		for _, imp := range imps {
			from, to := topFolder(pkg), topFolder(imp)
			if from == to {
				continue
			}
			if edges[from] == nil {
				edges[from] = map[string][]string{}
			}
			edges[from][to] = append(edges[from][to], pkg+" -> "+imp)
		}
	}
	for _, cycle := range folderCycles(edges) {
		var why []string
		for i := range cycle {
			from, to := cycle[i], cycle[(i+1)%len(cycle)]
			examples := edges[from][to]
			sort.Strings(examples)
			why = append(why, examples[0])
		}
		t.Errorf("folders import each other: %s -> %s (%s)", strings.Join(cycle, " -> "), cycle[0], strings.Join(why, "; "))
	}
}

// folderCycles returns one cycle per strongly connected group of folders
// (Tarjan's algorithm), each starting at its alphabetically first folder.
func folderCycles(edges map[string]map[string][]string) [][]string {
	var nodes []string
	for n := range edges {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var cycles [][]string
	var visit func(n string)
	visit = func(n string) {
		index[n], low[n] = len(index), len(index)
		stack = append(stack, n)
		onStack[n] = true
		var next []string
		for m := range edges[n] {
			next = append(next, m)
		}
		sort.Strings(next)
		for _, m := range next {
			if _, seen := index[m]; !seen {
				visit(m)
				low[n] = min(low[n], low[m])
			} else if onStack[m] {
				low[n] = min(low[n], index[m])
			}
		}
		if low[n] != index[n] {
			return
		}
		var group []string
		for {
			m := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[m] = false
			group = append(group, m)
			if m == n {
				break
			}
		}
		if len(group) > 1 {
			cycles = append(cycles, cycleWithin(group, edges))
		}
	}
	for _, n := range nodes {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	return cycles
}

// cycleWithin finds a path from the group's first folder back to itself
// through folders of the group, by breadth-first search.
func cycleWithin(group []string, edges map[string]map[string][]string) []string {
	sort.Strings(group)
	in := map[string]bool{}
	for _, g := range group {
		in[g] = true
	}
	start := group[0]
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		var next []string
		for m := range edges[n] {
			next = append(next, m)
		}
		sort.Strings(next)
		for _, m := range next {
			if !in[m] {
				continue
			}
			if m == start {
				path := []string{n}
				for p := n; p != start; {
					p = prev[p]
					path = append(path, p)
				}
				slices.Reverse(path)
				return path
			}
			if _, seen := prev[m]; !seen {
				prev[m] = n
				queue = append(queue, m)
			}
		}
	}
	return group
}

func TestFolderCyclesAreFound(t *testing.T) {
	edges := map[string]map[string][]string{
		"cmd":      {"test": {"cmd/x -> test/y"}, "internal": {"cmd/x -> internal/z"}},
		"test":     {"cmd": {"test/y -> cmd/x"}},
		"internal": {},
		"a":        {"b": {"a -> b"}},
		"b":        {"c": {"b -> c"}},
		"c":        {"a": {"c -> a"}},
	}
	got := folderCycles(edges)
	want := [][]string{{"a", "b", "c"}, {"cmd", "test"}}
	sort.Slice(got, func(i, j int) bool { return got[i][0] < got[j][0] })
	if len(got) != len(want) || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("cycles %v, want %v", got, want)
	}
	if c := folderCycles(map[string]map[string][]string{"cmd": {"internal": nil}}); len(c) != 0 {
		t.Fatalf("an acyclic graph has cycles %v", c)
	}
}
