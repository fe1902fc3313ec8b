package dashboard

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestQueriesParse: every query of the dashboard is PromQL that
// Prometheus's own parser accepts once Grafana's variables are filled in.
func TestQueriesParse(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	queries := Queries(New())
	if len(queries) < 20 {
		t.Fatalf("only %d queries found: Queries misses some", len(queries))
	}
	for _, q := range queries {
		expr, err := WithSampleValues(q.Expr)
		if err != nil {
			t.Errorf("%s: %v", q.Where, err)
			continue
		}
		if _, err := p.ParseExpr(expr); err != nil {
			t.Errorf("%s: %v\n%s", q.Where, err, expr)
		}
	}
	if _, err := WithSampleValues(`rate(x[$__interval])`); err == nil {
		t.Error("an unknown variable must be an error, or a typo in one would pass")
	}
}

// TestLayout: panels sit inside the 24-column grid without overlapping,
// each with a unique ID and a description an operator can read on hover.
func TestLayout(t *testing.T) {
	d := New()
	ids := map[int]bool{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: ID %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.X < 0 || g.W <= 0 || g.X+g.W > 24 || g.H <= 0 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Fatalf("panels %q and %q overlap at %d,%d", other, p.Title, x, y)
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type != "row" && (p.Description == "" || len(p.Targets) == 0) {
			t.Errorf("panel %q needs a description and a query", p.Title)
		}
	}
}

// TestJSONIsWhatGrafanaImports: the JSON carries the UID, the data source
// variable every query uses, and the rows in order.
func TestJSONIsWhatGrafanaImports(t *testing.T) {
	data, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var d Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID != UID || d.Templating.List[0].Type != "datasource" {
		t.Fatalf("uid %q, first variable %+v", d.UID, d.Templating.List[0])
	}
	var rows []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			rows = append(rows, p.Title)
			continue
		}
		for _, target := range p.Targets {
			if target.Datasource == nil || target.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q query %s does not use the data source variable", p.Title, target.RefID)
			}
		}
	}
	want := "Disruption budgets per NodePool|Drift rollouts and the rollout guard|Admission|Conversion|karpgate"
	if got := strings.Join(rows, "|"); got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// TestTablesShowTheLabelsTheyGroupBy: a table's columns are the labels its
// query keeps, no more and no fewer: a column whose label the query drops
// would be empty, and a kept label without a column would show untitled.
func TestTablesShowTheLabelsTheyGroupBy(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	tables := 0
	for _, r := range rows() {
		for _, spec := range r.panels {
			if spec.kind != "table" {
				continue
			}
			tables++
			var columns []string
			for _, c := range spec.columns {
				columns = append(columns, c.label)
			}
			slices.Sort(columns)
			for _, q := range spec.queries {
				expr, err := p.ParseExpr(q.expr)
				if err != nil {
					t.Fatalf("panel %q: %v", spec.title, err)
				}
				agg, ok := expr.(*parser.AggregateExpr)
				if !ok || agg.Without {
					t.Errorf("panel %q: %s keeps no fixed set of labels; use by (...)", spec.title, q.expr)
					continue
				}
				kept := slices.Sorted(slices.Values(agg.Grouping))
				if !slices.Equal(kept, columns) {
					t.Errorf("panel %q: the query keeps %v, the columns are %v", spec.title, kept, columns)
				}
			}
		}
	}
	if tables == 0 {
		t.Fatal("no table panel: the judged release's table is gone")
	}
}
