package report

import (
	"bytes"
	"encoding/xml"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// node is a generic XML element, enough to walk an SVG.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []node     `xml:",any"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n node) hasClass(c string) bool { return slices.Contains(strings.Fields(n.attr("class")), c) }

// find returns the descendants of n (n included) that match.
func (n node) find(match func(node) bool) []node {
	var out []node
	if match(n) {
		out = append(out, n)
	}
	for _, c := range n.Nodes {
		out = append(out, c.find(match)...)
	}
	return out
}

func byClass(c string) func(node) bool { return func(n node) bool { return n.hasClass(c) } }

func texts(ns []node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, strings.TrimSpace(n.Text))
	}
	return out
}

func renderSVG(t *testing.T) node {
	t.Helper()
	var out bytes.Buffer
	if err := WriteSVG(&out, fixtureReport(t, nil)); err != nil {
		t.Fatal(err)
	}
	var root node
	if err := xml.Unmarshal(out.Bytes(), &root); err != nil {
		t.Fatalf("the SVG is not well-formed XML: %v", err)
	}
	if root.XMLName.Local != "svg" {
		t.Fatalf("root element %q, want svg", root.XMLName.Local)
	}
	return root
}

func TestSVGHasALanePerReasonPerNodePool(t *testing.T) {
	root := renderSVG(t)
	pools := root.find(byClass("nodepool"))
	var names []string
	for _, p := range pools {
		names = append(names, p.attr("data-name"))
		lanes := p.find(byClass("lane"))
		// rejected and unreadable NodePools get a message, not lanes.
		if p.attr("data-name") == "rejected" || p.attr("data-name") == "unreadable" {
			if len(lanes) != 0 {
				t.Errorf("%s has %d lanes, want none", p.attr("data-name"), len(lanes))
			}
			continue
		}
		var reasons []string
		for _, l := range lanes {
			reasons = append(reasons, l.attr("data-reason"))
		}
		if got := strings.Join(reasons, ","); got != "Underutilized,Empty,Drifted,Unhealthy" {
			t.Errorf("%s lanes = %s", p.attr("data-name"), got)
		}
		for _, l := range lanes {
			if got := texts(l.find(byClass("lane-label"))); len(got) != 1 || got[0] != l.attr("data-reason") {
				t.Errorf("%s lane label = %v", l.attr("data-reason"), got)
			}
		}
	}
	want := "business-hours,drift-overnight,weekend-typo,legacy-default,surprises,rejected,unreadable"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("NodePools drawn = %s, want %s", got, want)
	}
}

func TestSVGBusinessHoursLane(t *testing.T) {
	root := renderSVG(t)
	drifted := lane(t, root, "business-hours", "Drifted")
	// Window edges, labelled with their clock times, Monday to Friday.
	if got, want := texts(drifted.find(byClass("edge"))), strings.Repeat("09:00,17:00,", 5); strings.Join(got, ",")+"," != want {
		t.Errorf("edge labels = %v, want %s", got, want)
	}
	segs := drifted.find(byClass("seg"))
	var classes []string
	for _, s := range segs {
		classes = append(classes, strings.TrimPrefix(s.attr("class"), "seg "))
	}
	if got, want := strings.Join(classes, ","), "unlimited,zero,unlimited,zero,unlimited,zero,unlimited,zero,unlimited,zero,unlimited"; got != want {
		t.Errorf("segments = %s, want %s", got, want)
	}
	// Monday 00:00-09:00 is too narrow for the word.
	if got := texts(drifted.find(byClass("seg-label"))); got[0] != "∞" || got[1] != "0" || got[2] != "unlimited" {
		t.Errorf("segment labels = %v", got)
	}
	// Monday 09:00 is 9/168 of the way across the plot.
	x, _ := strconv.ParseFloat(segs[1].attr("x"), 64)
	if want := labelWidth + plotWidth*9.0/168; math.Abs(x-want) > 0.01 {
		t.Errorf("Monday 09:00 at x=%.2f, want %.2f", x, want)
	}
	if got := texts(drifted.find(byClass("seg"))[1].find(func(n node) bool { return n.XMLName.Local == "title" })); len(got) != 1 || !strings.Contains(got[0], `Mon 06 Jan 09:00 → Mon 06 Jan 17:00: 0 (budgets[0]: nodes "0")`) {
		t.Errorf("tooltip = %v", got)
	}
	empty := lane(t, root, "business-hours", "Empty")
	if got := texts(empty.find(byClass("seg-label"))); len(got) != 1 || got[0] != "11" {
		t.Errorf("Empty lane labels = %v, want the single number 11", got)
	}
}

func TestSVGBlockedAndLegend(t *testing.T) {
	root := renderSVG(t)
	for _, reason := range []string{"Underutilized", "Empty", "Drifted", "Unhealthy"} {
		segs := lane(t, root, "weekend-typo", reason).find(byClass("seg"))
		if len(segs) != 1 || !segs[0].hasClass("blocked") {
			t.Errorf("weekend-typo %s: want one blocked segment, got %d", reason, len(segs))
		}
	}
	messages := texts(pool(t, root, "weekend-typo").find(byClass("problem")))
	joined := strings.Join(messages, " ")
	if !strings.Contains(joined, "blocked: every reason, because") || !strings.Contains(joined, "beginning of range (6) beyond end of range (0)") || !strings.Contains(joined, `use "0 9 * * sat,sun"`) {
		t.Errorf("weekend-typo message = %q", joined)
	}
	var legend []string
	for _, s := range root.find(byClass("legend-swatch")) {
		legend = append(legend, strings.TrimPrefix(s.attr("class"), "legend-swatch "))
	}
	if got := strings.Join(legend, ","); got != "unlimited,limited,zero,blocked" {
		t.Errorf("legend = %s", got)
	}
	days := texts(pool(t, root, "business-hours").find(byClass("day")))
	if got := strings.Join(days, ","); got != "Mon 06 Jan,Tue 07 Jan,Wed 08 Jan,Thu 09 Jan,Fri 10 Jan,Sat 11 Jan,Sun 12 Jan" {
		t.Errorf("day ticks = %s", got)
	}
	if got := texts(pool(t, root, "business-hours").find(byClass("now-label"))); len(got) != 1 || got[0] != "now 14:30" {
		t.Errorf("now marker = %v", got)
	}
}

func pool(t *testing.T, root node, name string) node {
	t.Helper()
	for _, p := range root.find(byClass("nodepool")) {
		if p.attr("data-name") == name {
			return p
		}
	}
	t.Fatalf("no NodePool %s in the SVG", name)
	return node{}
}

func lane(t *testing.T, root node, poolName, reason string) node {
	t.Helper()
	for _, l := range pool(t, root, poolName).find(byClass("lane")) {
		if l.attr("data-reason") == reason {
			return l
		}
	}
	t.Fatalf("no %s lane in %s", reason, poolName)
	return node{}
}

// TestSVGMarksDaylightSavingShifts: a chart over the Paris spring shift has
// one shift line per NodePool, at the shift instant, labelled with the new
// zone, and says in its messages when each budget's windows open locally.
func TestSVGMarksDaylightSavingShifts(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	r := fixtureReportFrom(t, paris, time.Date(2025, 3, 24, 0, 0, 0, 0, time.UTC), "testdata/pools.yaml")
	var out bytes.Buffer
	if err := WriteSVG(&out, r); err != nil {
		t.Fatal(err)
	}
	var root node
	if err := xml.Unmarshal(out.Bytes(), &root); err != nil {
		t.Fatal(err)
	}
	shifts := root.find(byClass("shift"))
	if len(shifts) != len(r.Pools) {
		t.Fatalf("%d shift marks for %d NodePools", len(shifts), len(r.Pools))
	}
	wantX := xOf(r, time.Date(2025, 3, 30, 1, 0, 0, 0, time.UTC))
	line := shifts[0].find(func(n node) bool { return n.XMLName.Local == "line" })[0]
	if x, _ := strconv.ParseFloat(line.attr("x1"), 64); math.Abs(x-wantX) > 0.01 {
		t.Errorf("shift line at x=%v, want %v", x, wantX)
	}
	if got := texts(shifts[0].find(byClass("shift-label"))); len(got) != 1 || got[0] != "→ CEST" {
		t.Errorf("shift label = %v", got)
	}
	messages := strings.Join(texts(root.find(byClass("message"))), "\n")
	if !strings.Contains(messages, "local time: budgets[0] opens 09:00 UTC is 10:00 CET until 30 March, then 11:00 CEST") {
		t.Errorf("messages do not give the local window times:\n%s", messages)
	}
}
