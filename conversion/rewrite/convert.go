package rewrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/conversion"
	"github.com/karpgate/karpgate/internal/fielderr"
	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/manifest"
)

// Result is what converting a set of inputs gives.
type Result struct {
	Files   []File   // every input source, in order, changed or not
	Changes []Change // every change, in the order of the files
	Notes   []Change // what a person should know or do because of them
	Drifts  []Drift  // NodePools whose nodes will be replaced
}

// File is one input source and what it becomes.
type File struct {
	Source  string // a path, or "-" for standard input
	Output  []byte
	Changed bool
}

// Change is one reported change or note, at the place it concerns.
type Change struct {
	Source string
	Line   int
	Object string // "NodePool/default"
	Text   string
}

func (c Change) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", manifest.DisplayName(c.Source), c.Line, c.Object, c.Text)
}

// Drift names a NodePool whose nodes Karpenter will replace because of a
// change, and why.
type Drift struct {
	NodePool string
	Reason   string
}

// ObjectErrors lists the objects that could not be converted.
type ObjectErrors []error

func (e ObjectErrors) Error() string {
	lines := make([]string, len(e))
	for i, err := range e {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

type source struct {
	name string
	docs []*document
}

type document struct {
	source  *source
	doc     *manifest.Document
	objects []*object
	inserts []*object // split EC2NodeClasses written after this document
}

// object is one Karpenter object: what was read and what will be written.
type object struct {
	doc      *document
	src      *manifest.Object // nil for a split copy
	kind     karpenter.Kind
	version  string
	before   map[string]any
	after    map[string]any
	borrowed map[string]nodePair // nodes for added fields, by field path
	messages map[string]string   // field path -> text replacing the generic one
	copyOf   *object             // for a split copy: the EC2NodeClass it copies
	owned    bool                // after is not before itself
}

func (o *object) name() string {
	if o.src != nil {
		return o.src.Name()
	}
	return stringAt(o.after, "metadata", "name")
}

func (o *object) ref() string { return o.kind.Kind + "/" + o.name() }

// Convert reads the inputs (files, folders, "-" for stdin) and converts
// every Karpenter v1beta1 object in them to v1. A read or parse error is
// returned as is; objects that cannot be converted come back together as
// ObjectErrors, with no result.
func Convert(ctx context.Context, inputs []string, stdin io.Reader) (*Result, error) {
	sources, err := read(inputs, stdin)
	if err != nil {
		return nil, err
	}
	var objects []*object
	for _, s := range sources {
		for _, d := range s.docs {
			objects = append(objects, d.objects...)
		}
	}
	r := &Result{}
	opts := conversion.Options{NodePools: nodePoolsOf(objects)}
	var failed ObjectErrors
	for _, o := range objects {
		if o.version != karpenter.V1Beta1 {
			continue
		}
		converted, err := conversion.Convert(ctx, o.before, karpenter.V1, opts)
		if err != nil {
			line := o.src.Node.Line
			var field *fielderr.FieldError
			if errors.As(err, &field) {
				line = o.src.Position(field.Path).Line
			}
			failed = append(failed, fmt.Errorf("%s:%d: %w", manifest.DisplayName(o.src.Source), line, err))
			continue
		}
		o.after, o.owned = converted, true
		r.keepCleanV1(o)
		if o.kind.Kind == karpenter.KindNodeClaim {
			r.noteMissingNodePool(o, opts.NodePools.(inputNodePools))
		}
	}
	if len(failed) > 0 {
		return nil, failed
	}
	if err := r.placeKubelets(objects); err != nil {
		return nil, ObjectErrors{err}
	}
	for _, s := range sources {
		file, err := r.render(s)
		if err != nil {
			return nil, err
		}
		r.Files = append(r.Files, file)
	}
	r.sortBySource(sources)
	return r, nil
}

// sortBySource orders changes and notes by input, then line.
func (r *Result) sortBySource(sources []*source) {
	index := map[string]int{}
	for i, s := range sources {
		index[s.name] = i
	}
	for _, list := range [][]Change{r.Changes, r.Notes} {
		sort.SliceStable(list, func(i, j int) bool {
			if a, b := index[list[i].Source], index[list[j].Source]; a != b {
				return a < b
			}
			return list[i].Line < list[j].Line
		})
	}
}

// keepCleanV1 drops what only serves a way back to v1beta1: the recorded
// v1beta1 nodeClassRef (the v1 one is complete) and karpgate's restore
// annotation, reporting each field that annotation would have kept.
func (r *Result) keepCleanV1(o *object) {
	deleteAnnotation(o.after, karpenter.NodeClassReferenceCompatibilityAnnotation)
	fields, err := conversion.RestoredFields(o.after, karpenter.V1Beta1)
	if err == nil && len(fields) > 0 {
		for _, f := range fields {
			r.note(o, "", fmt.Sprintf("dropped %s: v1 has no field for it", f))
		}
	}
	deleteAnnotation(o.after, karpenter.RestoreV1Beta1Annotation)
	if o.kind.Kind == karpenter.KindEC2NodeClass {
		r.noteAMIs(o)
	}
}

// noteAMIs points out what the AMI conversion leaves to a person.
func (r *Result) noteAMIs(o *object) {
	if steps, ok := annotation(o.after, karpenter.UbuntuCompatibilityAnnotation); ok {
		text := "v1 has no Ubuntu family: it bootstraps as AL2"
		if strings.Contains(steps, karpenter.UbuntuCompatibilityIncompatible) {
			text += "; amiSelectorTerms holds a placeholder, and Karpenter launches no nodes from this class until it names your Ubuntu AMIs"
		}
		r.note(o, "spec.amiFamily", text+"; then remove annotation "+karpenter.UbuntuCompatibilityAnnotation)
	}
	terms, _, _ := unstructured.NestedSlice(o.after, "spec", "amiSelectorTerms")
	if len(terms) == 1 {
		if term, ok := terms[0].(map[string]any); ok {
			if alias, ok := term["alias"].(string); ok && strings.HasSuffix(alias, "@"+karpenter.AliasVersionLatest) {
				r.note(o, "spec.amiFamily", "alias "+alias+" follows every new AMI release, as amiFamily alone did, and drifts every node each time; pin a version (family@vYYYYMMDD) for production")
			}
		}
	}
}

// noteMissingNodePool says when a NodeClaim got Never because its NodePool
// was not among the inputs, where the cluster might know better.
func (r *Result) noteMissingNodePool(o *object, pools inputNodePools) {
	name, found, _ := unstructured.NestedString(o.before, "metadata", "labels", karpenter.NodePoolLabel)
	switch _, known := pools[name]; {
	case !found:
		r.note(o, "", "spec.expireAfter is Never: it has no "+karpenter.NodePoolLabel+" label (Karpenter does the same)")
	case !known:
		r.note(o, "", "spec.expireAfter is Never: its NodePool "+name+" is not among the inputs (Karpenter does the same for a missing NodePool)")
	}
}

func read(inputs []string, stdin io.Reader) ([]*source, error) {
	names, err := manifest.ExpandInputs(inputs)
	if err != nil {
		return nil, err
	}
	var sources []*source
	for _, name := range names {
		s := &source{name: name}
		visit := func(d *manifest.Document) error {
			doc := &document{source: s, doc: d}
			for _, obj := range d.Objects {
				kind, version, ok := karpenter.LookupKind(obj.APIVersion(), obj.Kind())
				if !ok {
					continue
				}
				doc.objects = append(doc.objects, &object{doc: doc, src: obj, kind: kind, version: version, before: obj.Content, after: obj.Content})
			}
			s.docs = append(s.docs, doc)
			return nil
		}
		if name == manifest.StdinName {
			if stdin == nil {
				return nil, fmt.Errorf("%s: no standard input", manifest.DisplayName(name))
			}
			err = manifest.ParseStream(name, stdin, visit)
		} else {
			err = parseFile(name, visit)
		}
		if err != nil {
			return nil, err
		}
		sources = append(sources, s)
	}
	return sources, nil
}

func parseFile(name string, visit func(*manifest.Document) error) error {
	f, err := os.Open(name)
	if err != nil {
		return &manifest.ParseError{Source: name, Err: err}
	}
	defer f.Close()
	return manifest.ParseStream(name, f, visit)
}

func (r *Result) note(o *object, path, text string) {
	r.Notes = append(r.Notes, Change{Source: o.doc.source.name, Line: o.line(path), Object: o.ref(), Text: text})
}

// line is where path is written in the original, or where the object is.
func (o *object) line(path string) int {
	if o.src == nil {
		return o.copyOf.line("")
	}
	return o.src.Position(path).Line
}
