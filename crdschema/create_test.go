package crdschema

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

var linkedOnce = sync.OnceValues(Linked)

func linked(t testing.TB) *Set {
	t.Helper()
	set, err := linkedOnce()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func create(t testing.TB, set *Set, obj map[string]any) *Verdict {
	t.Helper()
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	v, ok := set.Lookup(apiVersion, kind)
	if !ok {
		t.Fatalf("%s %s not served by %s", apiVersion, kind, set.Name())
	}
	verdict, err := v.Create(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	return verdict
}

// nodePool is a valid v1 NodePool with extra spec fields merged in.
func nodePool(spec string) string {
	return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
` + spec
}

// capacityBuffer is a valid CapacityBuffer (Karpenter v1.14+) with extra
// spec fields merged in.
func capacityBuffer(spec string) string {
	return `apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: spare, namespace: team-a}
spec:
  podTemplateRef: {name: spare-shape}
` + spec
}

func nodeClass(spec string) string {
	return `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
` + spec
}

// brief renders violations as "class path [fix]" lines for comparing.
func brief(vs []Violation) []string {
	out := []string{}
	for _, v := range vs {
		s := string(v.Class) + " " + v.Path
		if v.Fix != "" {
			s += " [" + v.Fix + "]"
		}
		out = append(out, s)
	}
	return out
}

func TestCreateVerdicts(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
		// message, if set, must appear in the first violation's message.
		message string
	}{
		{"valid NodePool", nodePool(""), []string{}, ""},
		{"valid EC2NodeClass", nodeClass("  amiSelectorTerms: [{alias: al2023@v20240807}]\n"), []string{}, ""},
		{"missing operator", nodePool("  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: [{key: karpenter.sh/capacity-type, values: [spot]}]}}\n"),
			[]string{"required spec.template.spec.requirements[0].operator [Add operator under spec.template.spec.requirements[0], one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte.]"}, "Required value"},
		{"quoted weight", nodePool("  weight: \"10\"\n"),
			[]string{"type spec.weight [Remove the quotes: 10.]"}, "must be of type integer"},
		{"number where a string belongs", nodeClass("  amiSelectorTerms: [{alias: al2023@v20240807}]\n  tags: {team: 42}\n"),
			[]string{`type spec.tags.team [Quote the value: "42".]`}, "must be of type string"},
		{"enum in the wrong case", nodePool("  disruption: {consolidationPolicy: whenEmpty, consolidateAfter: 1m}\n"),
			[]string{`enum spec.disruption.consolidationPolicy [Did you mean "WhenEmpty"?]`}, `supported values: "WhenEmpty"`},
		{"enum far from any value", nodePool("  disruption: {consolidationPolicy: Sometimes, consolidateAfter: 1m}\n"),
			[]string{"enum spec.disruption.consolidationPolicy"}, "Unsupported value"},
		{"duration with days", nodePool("  disruption: {consolidateAfter: 1d}\n"),
			[]string{"pattern spec.disruption.consolidateAfter"}, "should match"},
		{"weight above its maximum", nodePool("  weight: 200\n"),
			[]string{"bounds spec.weight"}, "less than or equal to 100"},
		// The schema's minimum and the scale subresource's check both
		// refuse it; one finding says it.
		{"negative replicas", nodePool("  replicas: -1\n"),
			[]string{"bounds spec.replicas"}, "greater than or equal to 0"},
		{"replicas above the scale subresource's maximum", nodePool("  replicas: 3000000000\n"),
			[]string{"bounds spec.replicas"}, "less than or equal to 2147483647"},
		{"Gt with two values", strings.Replace(nodePool(""), "values: [on-demand]}]", "values: [on-demand]}, {key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [\"4\", \"8\"]}]", 1),
			[]string{"rule spec.template.spec.requirements"}, "must have a single positive integer value"},
		{"restricted label", strings.Replace(nodePool(""), "values: [on-demand]}]", "values: [on-demand]}, {key: kubernetes.io/hostname, operator: In, values: [a]}]", 1),
			[]string{"rule spec.template.spec.requirements[1].key"}, "restricted"},
		{"alias with another term", nodeClass("  amiSelectorTerms: [{alias: al2023@latest}, {id: ami-123}]\n"),
			[]string{"rule spec.amiSelectorTerms"}, "mutually exclusive"},
		{"pinned Windows alias", nodeClass("  amiSelectorTerms: [{alias: windows2022@v20240101}]\n"),
			[]string{"rule spec.amiSelectorTerms[0].alias"}, "windows families may only specify version 'latest'"},
		{"alias with another term", nodeClass("  amiSelectorTerms: [{alias: al2023@latest}, {id: ami-0123456789abcdef0}]\n"),
			[]string{"rule spec.amiSelectorTerms"}, "'alias' is mutually exclusive"},
		{"misspelt field", nodePool("  disruption: {consolidateAfer: 1m}\n"),
			[]string{`unknownField spec.disruption.consolidateAfer [Did you mean "consolidateAfter"?]`}, `unknown field "spec.disruption.consolidateAfer"`},
		{"unknown field far from any", nodePool("  disruption: {consolidateAfter: 1m, surge: 3}\n"),
			[]string{"unknownField spec.disruption.surge [Remove it; spec.disruption allows budgets, consolidateAfter, consolidationPolicy.]"}, "unknown field"},
		{"unknown metadata field", strings.Replace(nodePool(""), "metadata: {name: general}", "metadata: {name: general, lables: {a: b}}", 1),
			[]string{`unknownField metadata.lables [Did you mean "labels"?]`}, "unknown field"},
		{"invalid name", strings.Replace(nodePool(""), "name: general}", "name: General_Pool}", 1),
			[]string{"metadata metadata.name"}, "RFC 1123"},
		{"malformed labels", strings.Replace(nodePool(""), "metadata: {name: general}", "metadata: {name: general, labels: [a]}", 1),
			[]string{"metadata metadata"}, "malformed metadata"},
		{"duplicate reasons in a set", nodePool("  disruption: {consolidateAfter: 1m, budgets: [{nodes: \"1\", reasons: [Drifted, Drifted]}]}\n"),
			[]string{"list spec.disruption.budgets[0].reasons[1]"}, "Duplicate value"},
		{"valid CapacityBuffer", capacityBuffer("  replicas: 3\n"), []string{}, ""},
		{"CapacityBuffer with negative replicas", capacityBuffer("  replicas: -3\n"),
			[]string{"bounds spec.replicas"}, "greater than or equal to 0"},
		{"CapacityBuffer of a pod template with no count", capacityBuffer(""),
			[]string{"rule spec"}, "If podTemplateRef is set, replicas or limits must also be set"},
		{"CapacityBuffer with both references", capacityBuffer("  replicas: 3\n  scalableRef: {kind: Deployment, name: web}\n"),
			[]string{"rule spec"}, "either PodTemplateRef or ScalableRef, but not both"},
		{"blocking errors keep CEL from running", strings.Replace(nodePool("  weight: \"x\"\n"), "values: [on-demand]}]", "values: [on-demand]}, {key: kubernetes.io/hostname, operator: In, values: [a]}]", 1),
			[]string{"type spec.weight"}, "must be of type integer"},
	}
	set := linked(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdict := create(t, set, decode(t, tt.doc))
			if got := brief(verdict.Violations); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("violations\n got %q\nwant %q\n%+v", got, tt.want, verdict.Violations)
			}
			if tt.message != "" && !strings.Contains(verdict.Violations[0].Message, tt.message) {
				t.Errorf("message %q lacks %q", verdict.Violations[0].Message, tt.message)
			}
			for _, v := range verdict.Violations {
				if strings.HasPrefix(v.Message, v.Path+":") {
					t.Errorf("message repeats the path: %q", v.Message)
				}
			}
		})
	}
}

// YAML's .nan and .inf reach Create from manifest files; kubectl cannot
// encode them.
func TestNonFiniteNumbers(t *testing.T) {
	obj := decode(t, nodePool(""))
	obj["spec"].(map[string]any)["weight"] = math.NaN()
	obj["spec"].(map[string]any)["limits"] = map[string]any{"cpu": math.Inf(1)}
	got := brief(create(t, linked(t), obj).Violations)
	if len(got) < 2 || got[0] != "other spec.limits.cpu [Write a finite number, or quote the value if it is meant as a string.]" || !strings.HasPrefix(got[1], "other spec.weight") {
		t.Fatalf("got %q", got)
	}
}

func TestCreateDefaultsPrunesAndKeepsInputIntact(t *testing.T) {
	obj := decode(t, nodePool("  disruption: {consolidateAfter: 1m}\n  surge: 3\n"))
	before := fmt.Sprint(obj)
	verdict := create(t, linked(t), obj)
	if fmt.Sprint(obj) != before {
		t.Fatal("Create modified its input")
	}
	want := []string{"spec.disruption.budgets", "spec.disruption.consolidationPolicy", "spec.template.spec.expireAfter"}
	if !reflect.DeepEqual(verdict.Defaults, want) {
		t.Errorf("defaults %q, want %q", verdict.Defaults, want)
	}
	budgets, _ := verdict.Defaulted["spec"].(map[string]any)["disruption"].(map[string]any)["budgets"].([]any)
	if len(budgets) != 1 || budgets[0].(map[string]any)["nodes"] != "10%" {
		t.Errorf("rules must see the CRD's 10%% budget, got %v", budgets)
	}
	if _, kept := verdict.Defaulted["spec"].(map[string]any)["surge"]; !kept {
		t.Error("Defaulted must keep unknown fields for the rules")
	}
	if _, kept := verdict.Stored["spec"].(map[string]any)["surge"]; kept {
		t.Error("Stored must drop unknown fields, as the API server does")
	}
}

// `kubectl get -o yaml` output carries status and server-set metadata; a
// create with them would be refused for that alone, which says nothing
// about the object, so they are dropped.
func TestServerSetFieldsAreIgnored(t *testing.T) {
	doc := strings.Replace(nodePool("status: {nodes: 3, conditions: [{type: Ready, status: \"True\"}], bogus: 1}\n"),
		"metadata: {name: general}",
		"metadata: {name: general, uid: 0d7a, resourceVersion: \"42\", generation: 3, creationTimestamp: \"2024-06-05T12:00:00Z\", managedFields: [{manager: kubectl}]}", 1)
	verdict := create(t, linked(t), decode(t, doc))
	if len(verdict.Violations) != 0 {
		t.Fatalf("got %+v", verdict.Violations)
	}
	if _, ok := verdict.Stored["status"]; ok {
		t.Error("status must not be stored on create")
	}
}

func TestCompiledOncePerVersionUnderConcurrency(t *testing.T) {
	set, err := Linked() // a fresh set: nothing compiled yet
	if err != nil {
		t.Fatal(err)
	}
	if n := set.Compilations(); n != 0 {
		t.Fatalf("New compiled %d versions; compiling waits for first use", n)
	}
	docs := []map[string]any{
		decode(t, nodePool("")),
		decode(t, nodeClass("  amiSelectorTerms: [{alias: al2023@latest}, {id: ami-1}]\n")),
		decode(t, `{apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: {name: c}, spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: []}}`),
	}
	want := make([][]string, len(docs))
	for i, d := range docs {
		want[i] = brief(create(t, linked(t), d).Violations) // another set: the one under test stays cold
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64*len(docs))
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := g % len(docs)
			v, _ := set.Lookup(docs[i]["apiVersion"].(string), docs[i]["kind"].(string))
			verdict, err := v.Create(context.Background(), docs[i])
			if err != nil {
				errs <- err.Error()
				return
			}
			if got := brief(verdict.Violations); !reflect.DeepEqual(got, want[i]) {
				errs <- fmt.Sprintf("goroutine %d: %q, want %q", g, got, want[i])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := set.Compilations(); n != len(docs) {
		t.Errorf("%d compilations for %d versions used by 64 concurrent objects; want one per version", n, len(docs))
	}
}
