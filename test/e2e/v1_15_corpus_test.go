package e2e

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/crdschema"
	"github.com/karpgate/karpgate/lint"
	"github.com/karpgate/karpgate/policies"
)

// v1_15Corpus are the files of the verdict corpus written for what
// Karpenter v1.15 added since v1.0 (issue #29): the differential test reads
// them with the rest, the tests here also read what each object should get.
var v1_15Corpus = []string{
	filepath.Join(verdictCorpus, "v1_15_nodepools.yaml"),
	filepath.Join(verdictCorpus, "v1_15_ec2nodeclasses.yaml"),
}

// v1_15Expectation is what the first comment line of a v1.15 corpus
// document says the object gets.
type v1_15Expectation struct {
	corpusObject
	valid bool
	// productionDenial is the rule that denies a valid object once karpgate
	// judges it production (KG101 for an alias that can only be @latest).
	productionDenial string
	// field is where v1.15's API server refuses an invalid object; its
	// message names it.
	field string
}

var (
	validLine            = regexp.MustCompile(`^# valid(?:, production denies (KG[0-9]{3}))?: `)
	invalidLine          = regexp.MustCompile(`^# invalid at (\S+): `)
	firstDocumentComment = regexp.MustCompile(`(?m)^# (valid|invalid)\b.*$`)
)

// readV1_15Corpus reads the v1.15 objects of the corpus with their
// expectations, failing on a document whose comment says neither.
func readV1_15Corpus(t *testing.T) []v1_15Expectation {
	t.Helper()
	var out []v1_15Expectation
	for _, o := range readVerdictCorpus(t) {
		if !strings.HasPrefix(o.name, "v115-") {
			continue
		}
		line := string(firstDocumentComment.Find(o.doc))
		e := v1_15Expectation{corpusObject: o}
		if m := validLine.FindStringSubmatch(line); m != nil {
			e.valid, e.productionDenial = true, m[1]
		} else if m := invalidLine.FindStringSubmatch(line); m != nil {
			e.field = m[1]
		} else {
			t.Fatalf("%s: its comment %q says neither \"# valid: ...\" nor \"# invalid at <field>: ...\"", o.name, line)
		}
		if e.valid != strings.HasPrefix(o.name, "v115-valid-") {
			t.Fatalf("%s: the name and the comment %q disagree on whether it is valid", o.name, line)
		}
		out = append(out, e)
	}
	valid := 0
	for _, e := range out {
		if e.valid {
			valid++
		}
	}
	if valid < 15 || len(out)-valid < 25 {
		t.Fatalf("the v1.15 corpus holds %d valid and %d invalid objects; it no longer covers v1.15", valid, len(out)-valid)
	}
	return out
}

// TestV1_15CorpusLint lints the v1.15 corpus as `karpgate lint` does with
// its defaults (the linked CRDs, v1.15.1's, and karpgate.yaml's defaults),
// and again with every object judged production: no valid object gets a
// denial (but the production rule its comment names), and every invalid one
// is denied at the field v1.15's API server names.
func TestV1_15CorpusLint(t *testing.T) {
	corpus := readV1_15Corpus(t)
	crds, err := crdschema.Linked()
	if err != nil {
		t.Fatal(err)
	}
	production := config.Default().WithEnvironment("production")
	for _, tc := range []struct {
		name       string
		cfg        *config.Config
		production bool
	}{
		{"defaults", nil, false},
		{"production", production, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			engine, err := policies.New(context.Background(), policies.Options{Config: tc.cfg})
			if err != nil {
				t.Fatal(err)
			}
			report, err := lint.Run(context.Background(), lint.Options{Inputs: v1_15Corpus, Engine: engine, CRDs: crds})
			if err != nil {
				t.Fatal(err)
			}
			results := map[string]*lint.ObjectResult{}
			for i := range report.Objects {
				results[report.Objects[i].Name] = &report.Objects[i]
			}
			for _, e := range corpus {
				res := results[e.name]
				if res == nil {
					t.Errorf("%s (%s) was not linted", e.name, e.kind)
					continue
				}
				var denials []string
				deniedAtField := false
				for _, f := range res.Findings {
					if f.Action != config.Deny {
						continue
					}
					denials = append(denials, f.RuleID+" "+f.Path+": "+f.Message)
					deniedAtField = deniedAtField || f.Path == e.field
				}
				switch {
				case e.valid && tc.production && e.productionDenial != "":
					if len(denials) != 1 || !strings.HasPrefix(denials[0], e.productionDenial+" ") {
						t.Errorf("%s: in production it should be denied by %s alone, lint says %q", e.name, e.productionDenial, denials)
					}
				case e.valid && len(denials) > 0:
					t.Errorf("%s is valid in Karpenter v1.15, lint denies it: %q", e.name, denials)
				case !e.valid && !deniedAtField:
					t.Errorf("%s: v1.15 refuses it at %s, lint's denials are %q", e.name, e.field, denials)
				}
			}
		})
	}
}

// The corpus grammar itself: a document whose comment reads neither way
// must not slip through as valid or invalid.
func TestV1_15CorpusCommentGrammar(t *testing.T) {
	for _, tc := range []struct {
		comment         string
		valid, invalid  bool
		field, prodRule string
	}{
		{comment: "# valid: a static pool", valid: true},
		{comment: "# valid, production denies KG101: windows", valid: true, prodRule: "KG101"},
		{comment: "# invalid at spec.replicas: negative", invalid: true, field: "spec.replicas"},
		{comment: "# invalid: no field"},
		{comment: "# valid a static pool"},
		{comment: "# validity unknown: x"},
	} {
		v := validLine.FindStringSubmatch(tc.comment)
		i := invalidLine.FindStringSubmatch(tc.comment)
		if (v != nil) != tc.valid || (i != nil) != tc.invalid {
			t.Errorf("%q: read as valid=%v invalid=%v, want %v %v", tc.comment, v != nil, i != nil, tc.valid, tc.invalid)
		}
		if v != nil && v[1] != tc.prodRule || i != nil && i[1] != tc.field {
			t.Errorf("%q: read %q %q", tc.comment, v, i)
		}
	}
	if !bytes.Equal(firstDocumentComment.Find([]byte("# intro\n# valid: x\nkind: A\n")), []byte("# valid: x")) {
		t.Error("the first valid/invalid comment of a document is not found")
	}
}
