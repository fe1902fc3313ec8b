package conversion

import (
	"context"
	"errors"
	"fmt"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// NodePoolLookup finds the v1 `spec.template.spec.expireAfter` of a NodePool,
// which a v1 NodeClaim carries itself. The webhook reads the cluster; the
// CLI reads the other documents it was given.
type NodePoolLookup interface {
	// ExpireAfter returns found=false when there is no such NodePool.
	ExpireAfter(ctx context.Context, nodePoolName string) (value string, found bool, err error)
}

// LookupRefused is what a NodePoolLookup returns when it will not answer
// for this conversion at all (not when it failed to): the NodeClaim is
// then refused with Reason and Fix, and nothing about the NodePool.
type LookupRefused struct {
	Reason, Fix string
}

func (e *LookupRefused) Error() string { return e.Reason }

// Options tune a conversion.
type Options struct {
	// NodePools fills a NodeClaim's v1 expireAfter. Nil finds no NodePool,
	// so NodeClaims get Never, Karpenter's answer for a missing NodePool.
	NodePools NodePoolLookup
}

// env is what the kind rules may consult besides the object.
type env struct {
	ctx       context.Context
	nodePools NodePoolLookup
}

// rule converts obj in place to one version; apiVersion is set by Convert.
type rule func(e *env, obj map[string]any) error

var rules = map[string]map[string]rule{
	karpenter.KindNodePool:     {karpenter.V1: nodePoolToV1, karpenter.V1Beta1: nodePoolToV1Beta1},
	karpenter.KindNodeClaim:    {karpenter.V1: nodeClaimToV1, karpenter.V1Beta1: nodeClaimToV1Beta1},
	karpenter.KindEC2NodeClass: {karpenter.V1: ec2NodeClassToV1, karpenter.V1Beta1: ec2NodeClassToV1Beta1},
}

// Convert returns obj converted to toVersion ("v1" or "v1beta1") for a
// NodePool, NodeClaim or EC2NodeClass. obj is not modified. An object already
// at toVersion comes back as an unchanged copy. Errors are *Error values
// naming the object and the field.
func Convert(ctx context.Context, obj map[string]any, toVersion string, opts Options) (map[string]any, error) {
	if obj == nil {
		return nil, &Error{Object: "<nil>", Err: errors.New("no object")}
	}
	name := objectName(obj)
	kind, from, err := identify(obj)
	if err != nil {
		return nil, &Error{Object: name, Err: err}
	}
	if toVersion != karpenter.V1 && toVersion != karpenter.V1Beta1 {
		return nil, &Error{Object: name, Err: fmt.Errorf("cannot convert to version %q: karpgate converts between %s and %s", toVersion, karpenter.V1Beta1, karpenter.V1)}
	}
	if from == toVersion {
		return copyMap(obj), nil
	}
	e := &env{ctx: ctx, nodePools: opts.NodePools}
	out, err := convert(e, obj, kind, from, toVersion)
	if err != nil {
		return nil, &Error{Object: name, Err: err}
	}
	return out, nil
}

func convert(e *env, obj map[string]any, kind karpenter.Kind, from, to string) (map[string]any, error) {
	if err := checkNoForeignRestore(obj, from); err != nil {
		return nil, err
	}
	// in is obj without the restore annotation being consumed; it is only
	// read from here on, so obj itself serves when there is none.
	in := obj
	if _, found, err := getAnnotation(obj, karpenter.RestoreAnnotation(to)); err != nil {
		return nil, err
	} else if found {
		in = copyMap(obj)
	}
	records, err := takeRestore(in, karpenter.RestoreAnnotation(to))
	if err != nil {
		return nil, err
	}
	out := copyMap(in)
	if err := rules[kind.Kind][to](e, out); err != nil {
		return nil, err
	}
	out["apiVersion"] = kind.Group + "/" + to
	for _, r := range records {
		r.apply(out)
	}

	// Convert straight back and record whatever would not survive.
	back := copyMap(out)
	if err := rules[kind.Kind][from](e, back); err != nil {
		return nil, fmt.Errorf("converting the %s result back to %s: %w", to, from, err)
	}
	back["apiVersion"] = in["apiVersion"]
	if missing := diffForRestore(in, back); len(missing) > 0 {
		for _, m := range missing {
			if err := m.check(); err != nil {
				return nil, fmt.Errorf("internal error: the way back from %s changes more than it may: %w", to, err)
			}
		}
		if err := putRestore(out, karpenter.RestoreAnnotation(from), missing); err != nil {
			return nil, err
		}
	}
	if err := CheckMetadata(obj, out); err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	return out, nil
}

// identify finds the Karpenter kind and version of obj.
func identify(obj map[string]any) (karpenter.Kind, string, error) {
	apiVersion, _, err := optString(obj, "apiVersion", "")
	if err != nil {
		return karpenter.Kind{}, "", err
	}
	kindName, _, err := optString(obj, "kind", "")
	if err != nil {
		return karpenter.Kind{}, "", err
	}
	kind, version, ok := karpenter.LookupKind(apiVersion, kindName)
	if !ok {
		return karpenter.Kind{}, "", fieldError("apiVersion", "",
			"%q kind %q is not a Karpenter NodePool, NodeClaim or EC2NodeClass at v1beta1 or v1", apiVersion, kindName)
	}
	return kind, version, nil
}

func specOf(obj map[string]any) (map[string]any, error) {
	spec, err := optMap(obj, "spec", "")
	if err != nil {
		return nil, err
	}
	if spec == nil {
		return nil, fieldError("spec", "", "missing")
	}
	return spec, nil
}

// CheckMetadata verifies that converted differs from original in metadata
// only by labels and annotations, the rule for conversion webhooks.
func CheckMetadata(original, converted map[string]any) error {
	before, _ := original["metadata"].(map[string]any)
	after, _ := converted["metadata"].(map[string]any)
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	for k := range keys {
		if k == "labels" || k == "annotations" {
			continue
		}
		b, inBefore := before[k]
		a, inAfter := after[k]
		if inBefore != inAfter || !equalValues(b, a) {
			return fieldError(childPath("metadata", k), "", "changed by the conversion; only labels and annotations may change")
		}
	}
	return nil
}
