package preflight

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/migration/snapshot"
)

// crdVersions reads a CRD's served versions (in order), its storage version
// and its status.storedVersions.
type crdVersions struct {
	served  []string
	storage string
	stored  []string
}

func versionsOf(crd snapshot.Object) crdVersions {
	var v crdVersions
	versions, _, _ := unstructured.NestedSlice(crd.Content, "spec", "versions")
	for _, item := range versions {
		m, _ := item.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); served {
			v.served = append(v.served, name)
		}
		if storage, _ := m["storage"].(bool); storage {
			v.storage = name
		}
	}
	v.stored, _, _ = unstructured.NestedStringSlice(crd.Content, "status", "storedVersions")
	return v
}

func (v crdVersions) serves(version string) bool {
	for _, s := range v.served {
		if s == version {
			return true
		}
	}
	return false
}

// PF100: a CRD from before v1.0 has no v1, or stores v1beta1.
func checkCRDVersions(sc *scope) []Finding {
	var out []Finding
	for _, crd := range sc.s.CRDs {
		v := versionsOf(crd)
		if v.serves(karpenter.V1) && v.storage == karpenter.V1 {
			continue
		}
		out = append(out, Finding{
			Severity: Deny,
			Title:    fmt.Sprintf("CustomResourceDefinition %s predates Karpenter v1.0: it stores %s and serves %s", crd.Name(), orNone(v.storage), orNone(strings.Join(v.served, ", "))),
			Detail: "Karpenter v1.0 is the only release whose CRDs serve both v1beta1 and v1 with v1 stored; every later release needs its objects in v1. " +
				"An upgrade from v0.3x to " + sc.target.String() + " has to go through v1.0.x.",
			Objects: []ObjectRef{ref(crd, "storage version "+orNone(v.storage))},
			Fix: Fix{Edits: []string{
				"Upgrade Karpenter, CRDs first, to v1.0.x (Karpenter's v1 migration guide), with karpgate or Karpenter v1.0 as the CRDs' conversion webhook; then run preflight again.",
			}},
		})
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// PF101: v1beta1 (or anything but v1) in status.storedVersions.
func checkStoredVersions(sc *scope) []Finding {
	if !sc.target.DropsV1Beta1() {
		return nil
	}
	var objects []ObjectRef
	for _, crd := range sc.s.CRDs {
		v := versionsOf(crd)
		if len(v.stored) == 1 && v.stored[0] == karpenter.V1 || len(v.stored) == 0 {
			continue
		}
		note := fmt.Sprintf("storedVersions [%s]", strings.Join(v.stored, " "))
		if v.storage != karpenter.V1 {
			note += "; the storage version is still " + orNone(v.storage) + " (PF100 first)"
		}
		objects = append(objects, ref(crd, note))
	}
	if len(objects) == 0 {
		return nil
	}
	return []Finding{{
		Severity: Deny,
		Title:    fmt.Sprintf("v1beta1 is still a stored version of %s", plural(len(objects), "CRD", "CRDs")),
		Detail: fmt.Sprintf("Karpenter %s's CRDs serve only v1, and the API server refuses a CRD that drops a version still listed in status.storedVersions: "+
			"objects written before v1 became the storage version may still be stored as v1beta1 in etcd. "+
			"`karpgate migrate-storage` rewrites every NodePool, NodeClaim and EC2NodeClass as v1 (changing no field) and then removes v1beta1 from storedVersions.", sc.target),
		Objects: objects,
		Fix:     Fix{Commands: []string{"karpgate migrate-storage"}},
	}}
}

// converter is where a CRD's conversion webhook points.
type converter struct {
	service *snapshot.Service // nil for a URL
	url     string
}

func (c converter) String() string {
	if c.service != nil {
		return "service " + c.service.Key()
	}
	return c.url
}

// isKarpgate: karpgate serves conversion on its own path, behind a Service
// named after itself in its install, or at a URL in a local run.
func (c converter) isKarpgate(path string) bool {
	if c.service != nil {
		return c.service.Name == deploy.Name && path == deploy.ConvertPath
	}
	u, err := url.Parse(c.url)
	return err == nil && u.Path == deploy.ConvertPath
}

func converterOf(sc *scope, crd snapshot.Object) (converter, string, bool) {
	strategy, _, _ := unstructured.NestedString(crd.Content, "spec", "conversion", "strategy")
	if strategy != "Webhook" {
		return converter{}, "", false
	}
	cfg, _, _ := unstructured.NestedMap(crd.Content, "spec", "conversion", "webhook", "clientConfig")
	path, _, _ := unstructured.NestedString(cfg, "service", "path")
	if u, ok := cfg["url"].(string); ok && u != "" {
		return converter{url: u}, path, true
	}
	ns, _, _ := unstructured.NestedString(cfg, "service", "namespace")
	name, _, _ := unstructured.NestedString(cfg, "service", "name")
	svc := snapshot.Service{Namespace: ns, Name: name}
	if known, ok := sc.s.Services[svc.Key()]; ok {
		svc = known
	}
	return converter{service: &svc}, path, true
}

const stanzaOffCommand = `kubectl patch crd %s --type=json -p '[{"op":"replace","path":"/spec/conversion","value":{"strategy":"None"}}]'`

// PF106: where each CRD's conversion webhook points, and whether it answers.
// A converter that does not answer is one finding per CRD; the CRDs that
// convert through karpgate, or through another service that answers, are
// one finding each group.
func checkConversionStanzas(sc *scope) []Finding {
	var out []Finding
	crds := append([]snapshot.Object(nil), sc.s.CRDs...)
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name() < crds[j].Name() })
	var viaKarpgate, viaOther []ObjectRef
	var karpgateAt string
	var offKarpgate, offOther []string
	for _, crd := range crds {
		c, path, ok := converterOf(sc, crd)
		if !ok {
			continue
		}
		off := fmt.Sprintf(stanzaOffCommand, crd.Name())
		switch {
		case c.service != nil && c.service.Known && (!c.service.Exists || c.service.ReadyEndpoints == 0):
			what := "does not exist"
			if c.service.Exists {
				what = "has no ready endpoints"
			}
			out = append(out, Finding{
				Severity: Deny,
				Title:    fmt.Sprintf("CustomResourceDefinition %s converts through %s, which %s", crd.Name(), c, what),
				Detail: "Every read or write of these objects at a version other than the one an object is stored at fails now, Karpenter's own included. " +
					"This is what a conversion stanza left pointing at a Karpenter that no longer serves conversion does.",
				Objects: []ObjectRef{ref(crd, "conversion: "+c.String())},
				Fix: Fix{Edits: []string{
					"Point the conversion at a converter that runs: karpgate's (`kubectl apply --server-side --field-manager=karpgate --force-conflicts -f manifests/overlays/cert-manager/customresourcedefinition.yaml` from karpgate's install), or Karpenter v1.0's own service.",
					"Once every object is stored as v1 (PF101) and nothing writes v1beta1 (PF108), and only then, the conversion can be switched off instead: " + off,
				}},
			})
		case !sc.target.DropsV1Beta1():
		case c.isKarpgate(path):
			viaKarpgate = append(viaKarpgate, ref(crd, "conversion: "+c.String()))
			karpgateAt = c.String()
			offKarpgate = append(offKarpgate, off)
		default:
			viaOther = append(viaOther, ref(crd, "conversion: "+c.String()))
			offOther = append(offOther, off)
		}
	}
	check := "After the upgrade to " + sc.target.String() + ", when the CRDs serve only v1: if `kubectl get crd -o custom-columns=NAME:.metadata.name,CONVERSION:.spec.conversion.strategy` still shows Webhook for any of them, switch it off: "
	if len(viaKarpgate) > 0 {
		out = append(out, Finding{
			Severity: Info,
			Title:    fmt.Sprintf("%s %s through karpgate (%s)", pluralKind(len(viaKarpgate), "CustomResourceDefinition"), verb(len(viaKarpgate), "converts", "convert"), karpgateAt),
			Detail: fmt.Sprintf("Karpenter %s's CRDs serve only v1 and have no conversion stanza. Once every object is stored as v1 (PF101) and no managedFields entry is v1beta1 (PF108), nothing calls the conversion any more, and karpgate's can go. "+
				"karpgate's install applies its stanza with its own field manager, so server-side applying Karpenter's new CRDs with another manager keeps it.", sc.target),
			Objects: viaKarpgate,
			Fix:     Fix{Edits: []string{check + strings.Join(offKarpgate, "; ")}},
		})
	}
	if len(viaOther) > 0 {
		out = append(out, Finding{
			Severity: Info,
			Title:    fmt.Sprintf("%s %s through a service that is not karpgate's (Karpenter v1.0's own conversion, presumably)", pluralKind(len(viaOther), "CustomResourceDefinition"), verb(len(viaOther), "converts", "convert")),
			Detail:   fmt.Sprintf("Karpenter %s serves no conversion, and its CRDs have no conversion stanza: applying them must replace these, or every conversion the API server still needs fails once Karpenter v1.0 is gone.", sc.target),
			Objects:  viaOther,
			Fix:      Fix{Edits: []string{check + strings.Join(offOther, "; ")}},
		})
	}
	return out
}
