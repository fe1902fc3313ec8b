package twins

import (
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies/twin"
)

// configurations are the karpgate.yaml files and Karpenter releases the
// corpus is judged with: the defaults; a team's settings that move rules
// between actions, approve versions, name approvers and a target
// Kubernetes, judged by the oldest release karpgate knows; and a cluster
// that is production as a whole.
var configurations = []struct {
	name, yaml string
	judged     func() release.Judged
}{
	{"defaults", "", newest},
	{"team settings on Karpenter v1.0", `
production:
  values: [prod, Production, live]
  labels: [karpgate.io/environment, env]
  tags: [environment, Stage]
kubernetesVersion: "1.33"
amis:
  approvedAliasVersions:
    al2023: [v20240807, V20240901]
    bottlerocket: [v1.20.3]
waivers:
  approvers: {users: [alice@example.com], groups: [platform]}
rules:
  KG102: {severity: deny}
  KG109: {actions: {admission: warn}}
  KG110: {actions: {admission: audit}}
  KG105: {enabled: false}
  KG406: {actions: {admission: deny}}
  KG604: {waivable: false}
  KG101: {waivable: false}
`, oldest},
	{"production cluster", "environment: production\n", newest},
}

func newest() release.Judged { return release.ForRelease(release.Newest(), true, "newest") }
func oldest() release.Judged { return release.ForRelease(release.Oldest(), true, "oldest") }

// TestTwinsAgreeWithTheirRules is the differential test: every request the
// corpus makes, judged by the webhook's Rego and by the policy's CEL, for
// every configuration; each twin must report what its rule reports, at its
// action, with the same message, and every twin must have found something.
func TestTwinsAgreeWithTheirRules(t *testing.T) {
	hs := harnesses(t)
	set := cachedSet
	sources := readCorpus(t)
	switch {
	case *all:
	case testing.Short():
		sources = every(sources, 10) // a tenth of the corpus, for a quick look
	default:
		sources = sample(sources, twin.IDs(hs[0].twins))
	}
	total := &tally{found: map[string]int{}}
	for i, c := range configurations {
		h := hs[i]
		reqs, skipped := judgedRequests(t, set, sources, waivableTwins(h))
		tl := &tally{found: map[string]int{}}
		for _, r := range reqs {
			h.compare(t, r, tl)
		}
		t.Logf("%s: %d requests (%d creates, %d updates) from %d objects (not compared: %s; %d updates the match conditions keep from both); %d disagreements, %d findings stricter by design",
			c.name, tl.requests, tl.creates, tl.updates, len(sources), describeSkipped(skipped), tl.passedOver, len(tl.diffs), tl.stricter)
		total.add(tl)
	}
	var counts []string
	for _, id := range sortedKeys(total.found) {
		counts = append(counts, id+"="+strconv.Itoa(total.found[id]))
	}
	t.Logf("all configurations: %d requests, %d disagreements; requests where a twin and its rule both reported the rule: %s",
		total.requests, len(total.diffs), strings.Join(counts, " "))
	for _, d := range firstN(total.diffs, 40) {
		t.Error(d)
	}
	for _, tw := range hs[0].twins {
		_, never := refusedBeforeAdmission[tw.ID()]
		switch {
		case never && total.found[tw.ID()] > 0:
			t.Errorf("%s reported something on an object the API server hands admission, though it is listed as refused before it: %s", tw.ID(), refusedBeforeAdmission[tw.ID()])
		case !never && total.found[tw.ID()] == 0 && !testing.Short():
			t.Errorf("no request of the corpus made %s report anything: the differential test does not exercise its twin", tw.ID())
		}
	}
}

// refusedBeforeAdmission are the twins whose rules report only what the
// CRDs refuse before any admission policy runs: on every object the API
// server hands admission they must find nothing, as their rules do.
var refusedBeforeAdmission = map[string]string{
	"KG105": "the CRD's CEL rules tie amiFamily to the alias's family, and allow only lower-case families",
	"KG106": "a v1 EC2NodeClass cannot name Ubuntu, and a v1beta1 one converts to AL2",
	"KG203": "the CRD's CEL rule requires schedule and duration together",
	"KG205": "the CRD's pattern for nodes",
	"KG206": "the CRD's maxItems for budgets and its types",
}

func (t *tally) add(o *tally) {
	t.requests += o.requests
	t.creates += o.creates
	t.updates += o.updates
	t.stricter += o.stricter
	t.passedOver += o.passedOver
	for id, n := range o.found {
		t.found[id] += n
	}
	t.diffs = append(t.diffs, o.diffs...)
}

// waivableTwins are the twinned rules an annotation can waive.
func waivableTwins(h *harness) []string {
	var out []string
	for _, tw := range h.twins {
		if tw.Rule.Waivable {
			out = append(out, tw.ID())
		}
	}
	return out
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "... and more")
	}
	return s
}

// all runs the whole corpus: every object of it, as the acceptance of
// the twins asks (go test ./test/twins -args -twins.all; about ten times
// the default's time). Each request costs a policy evaluation of every
// twin under three bindings, too slow under the race detector to judge
// the whole corpus in make test.
var all = flag.Bool("twins.all", false, "judge the whole corpus, not a sample that exercises every twin")

// sample is what make test judges: the objects written to make the twins
// report (testdata/twins.yaml), each twinned rule's fail fixture, and
// every 20th object of the rest.
func sample(s []source, twinned []string) []source {
	var out []source
	for i, src := range s {
		keep := i%20 == 0 || strings.Contains(src.name, "testdata/twins.yaml")
		for _, id := range twinned {
			keep = keep || strings.Contains(src.name, "/rules/"+id+"/fail.yaml")
		}
		if keep {
			out = append(out, src)
		}
	}
	return out
}

func every(s []source, n int) []source {
	var out []source
	for i := 0; i < len(s); i += n {
		out = append(out, s[i])
	}
	return out
}
