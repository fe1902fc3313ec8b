package twins

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
	"github.com/karpgate/karpgate/test/corpus"
)

// corpusFiles are the written corpora: the verdict corpus of the e2e
// tests, the rule fixtures and the examples.
var corpusFiles = []string{
	"../e2e/testdata/verdicts",
	"../../policies/testdata/rules",
	"../../examples",
	"testdata",
}

// exampleInputs are corpusFiles with the Helm chart's templates left out:
// they are Go templates, YAML only once helm renders them.
func exampleInputs(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, root := range corpusFiles {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "templates":
				return filepath.SkipDir
			case !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")):
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// source is one object of a corpus, before the API server judges it.
type source struct {
	name   string
	object map[string]any
}

// readCorpus reads the written corpora and generates test/corpus's.
func readCorpus(t testing.TB) []source {
	t.Helper()
	var out []source
	objs, err := manifest.ReadAll(exampleInputs(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		out = append(out, source{name: fmt.Sprintf("%s %s", o.DisplaySource(), o.Ref()), object: o.Content})
	}
	var b strings.Builder
	// test/corpus repeats a few shapes: 60 documents hold each of its
	// problems several times.
	for i := range 60 {
		b.Reset()
		corpus.Document(&b, i/12, i%12, i, 5)
		docs, err := manifest.ReadAll(nil, strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range docs {
			out = append(out, source{name: fmt.Sprintf("corpus document %d %s", i, o.Ref()), object: o.Content})
		}
	}
	for i, raw := range corpus.StoredCluster(14, 14, 0) {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		out = append(out, source{name: fmt.Sprintf("stored cluster object %d", i), object: obj})
	}
	return out
}

// admitted is what the API server hands admission for obj: v1beta1
// converted to v1 as karpgate's conversion webhook does; the object with
// the CRD's defaults and unknown fields pruned; nothing for a kind the
// webhook does not judge or an object the CRD refuses.
func admitted(ctx context.Context, set *crdschema.Set, obj map[string]any) (map[string]any, string) {
	kind := kindOf(obj)
	if kind != karpenter.KindNodePool && kind != karpenter.KindEC2NodeClass {
		return nil, "not judged at admission"
	}
	if v, _ := obj["apiVersion"].(string); strings.HasSuffix(v, "/"+karpenter.V1Beta1) {
		converted, err := conversion.Convert(ctx, obj, karpenter.V1, conversion.Options{})
		if err != nil {
			return nil, "v1beta1 that does not convert"
		}
		obj = converted
	}
	apiVersion, _ := obj["apiVersion"].(string)
	v, ok := set.Lookup(apiVersion, kind)
	if !ok {
		return nil, "a version the CRDs do not serve"
	}
	verdict, err := v.Create(ctx, obj)
	if err != nil || len(verdict.Violations) > 0 {
		return nil, "refused by the CRD"
	}
	return verdict.Stored, ""
}

// requests are what a corpus object becomes: its CREATE and UPDATEs that
// move it in and out of production, touch it, and waive the twinned rules
// as someone approvers name and as someone they do not.
func requests(name string, obj map[string]any, waivable []string) []request {
	out := []request{{name: name + " (create)", op: admissionv1.Create, object: obj, user: "dev@example.com"}}
	update := func(what string, old, updated map[string]any, user string, groups ...string) {
		out = append(out, request{name: name + " (" + what + ")", op: admissionv1.Update, old: old, object: updated, user: user, groups: groups})
	}
	update("touch", obj, withLabel(obj, "team", "touched"), "dev@example.com")
	update("leave production", withLabel(obj, "karpgate.io/environment", "production"), withLabel(obj, "karpgate.io/environment", "dev"), "dev@example.com")
	update("drop the production label", withLabel(obj, "karpgate.io/environment", "Production"), withoutLabel(obj, "karpgate.io/environment"), "dev@example.com")
	update("enter production", withLabel(obj, "karpgate.io/environment", "staging"), withLabel(obj, "karpgate.io/environment", "prod"), "dev@example.com")
	if kindOf(obj) == karpenter.KindEC2NodeClass {
		update("production tag removed", withTag(obj, "environment", "production"), withTag(obj, "environment", "test"), "dev@example.com")
		update("selectors changed", obj, withSpec(obj, "subnetSelectorTerms", []any{map[string]any{"id": "subnet-0123456789abcdef0"}}), "dev@example.com")
		update("switched to @latest", obj, withSpec(obj, "amiSelectorTerms", []any{map[string]any{"alias": "al2023@latest"}}), "dev@example.com")
	}
	waivers := map[string]string{"karpgate.io/waive-KG999": "no such rule"}
	for _, id := range waivable {
		waivers["karpgate.io/waive-"+id] = "tested by the platform team"
	}
	update("waived by a developer", obj, withAnnotations(obj, waivers), "dev@example.com", "developers")
	update("waived by an approver", obj, withAnnotations(obj, waivers), "alice@example.com")
	update("waived by an approved group", obj, withAnnotations(obj, waivers), "carol@example.com", "platform")
	dated := map[string]string{}
	for _, id := range waivable {
		dated["karpgate.io/waive-"+id] = "until 2099-01-31: migrating"
	}
	update("waived until a date", obj, withAnnotations(obj, dated), "alice@example.com")
	return out
}

func edit(obj map[string]any, f func(m map[string]any)) map[string]any {
	b, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	f(out)
	return out
}

func field(m map[string]any, key string) map[string]any {
	child, ok := m[key].(map[string]any)
	if !ok {
		child = map[string]any{}
		m[key] = child
	}
	return child
}

func withLabel(obj map[string]any, key, value string) map[string]any {
	return edit(obj, func(m map[string]any) { field(field(m, "metadata"), "labels")[key] = value })
}

func withoutLabel(obj map[string]any, key string) map[string]any {
	return edit(obj, func(m map[string]any) { delete(field(field(m, "metadata"), "labels"), key) })
}

func withTag(obj map[string]any, key, value string) map[string]any {
	return edit(obj, func(m map[string]any) { field(field(m, "spec"), "tags")[key] = value })
}

func withSpec(obj map[string]any, key string, value any) map[string]any {
	return edit(obj, func(m map[string]any) { field(m, "spec")[key] = value })
}

func withAnnotations(obj map[string]any, annotations map[string]string) map[string]any {
	return edit(obj, func(m map[string]any) {
		a := field(field(m, "metadata"), "annotations")
		for k, v := range annotations {
			a[k] = v
		}
	})
}

// judgedRequests turns sources into the requests the API server would
// hand admission, counting what it would refuse before.
func judgedRequests(t testing.TB, set *crdschema.Set, sources []source, waivable []string) (out []request, skipped map[string]int) {
	t.Helper()
	skipped = map[string]int{}
	for _, s := range sources {
		obj, why := admitted(context.Background(), set, s.object)
		if why != "" {
			skipped[why]++
			continue
		}
		for _, r := range requests(s.name, obj, waivable) {
			// An edit the CRD refuses never reaches admission either.
			if _, why := admitted(context.Background(), set, r.object); why != "" {
				continue
			}
			if r.old != nil {
				if _, why := admitted(context.Background(), set, r.old); why != "" {
					continue
				}
			}
			out = append(out, r)
		}
	}
	return out, skipped
}

func describeSkipped(skipped map[string]int) string {
	var parts []string
	for _, why := range sortedKeys(skipped) {
		parts = append(parts, fmt.Sprintf("%d %s", skipped[why], why))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
