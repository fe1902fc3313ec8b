package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/karpgate/karpgate/budget"
)

// Chart geometry, in SVG user units (pixels at 100%).
const (
	chartWidth   = 1100
	labelWidth   = 130 // lane names on the left
	rightMargin  = 24
	plotWidth    = chartWidth - labelWidth - rightMargin
	laneHeight   = 34
	edgeBand     = 27 // two rows of window-edge labels above each lane
	laneGap      = 6
	titleHeight  = 26
	messageLine  = 16
	axisHeight   = 42 // day labels, then the range ends, then the now label: three rows that never collide
	poolGap      = 22
	legendHeight = 44
	minEdgeGap   = 30 // closer edge labels would overlap: skip them
	wrapAt       = 150
)

// Colours chosen to stay apart for the common colour blindnesses: blue-green
// for unlimited, amber for limited, brown-orange for zero, red stripes for
// blocked.
const (
	colourUnlimited = "#3a9e8f"
	colourLimited   = "#f2b134"
	colourZero      = "#c25b1c"
	colourBlocked   = "#c62828"
	colourGrid      = "#c8c8c8"
	colourText      = "#222222"
)

// WriteSVG draws one chart per NodePool, stacked: a lane per reason of the
// Karpenter release (Unhealthy from v1.15 on), time
// across, each stretch coloured by what it allows (with the number when
// limited), window edges labelled with their clock time, day ticks below,
// and a legend.
func WriteSVG(w io.Writer, r *Report) error {
	var body bytes.Buffer
	y := 12.0
	for _, p := range r.Pools {
		y = drawPool(&body, r, p, y) + poolGap
	}
	if len(r.Pools) == 0 {
		y = text(&body, 16, y+16, "title", "start", "no NodePool found in the input") + poolGap
	}
	y = drawLegend(&body, y)
	height := int(math.Ceil(y))
	var out bytes.Buffer
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`+"\n", chartWidth, height, chartWidth, height)
	fmt.Fprintf(&out, `<defs><pattern id="blocked-stripes" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="%s"/><rect width="3" height="8" fill="#8e1b1b"/></pattern></defs>`+"\n", colourBlocked)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	_, err := w.Write(out.Bytes())
	return err
}

// xOf maps an instant to the plot's x coordinate.
func xOf(r *Report, t time.Time) float64 {
	span := r.To.Sub(r.From).Seconds()
	return labelWidth + plotWidth*t.Sub(r.From).Seconds()/span
}

func drawPool(b *bytes.Buffer, r *Report, p *Pool, y float64) float64 {
	title := fmt.Sprintf("NodePool %s: %s; times in %s%s", p.Name, countWords(r.Options), zoneName(r.Location, r.From), utcNote(r.Location))
	fmt.Fprintf(b, `<g class="nodepool" data-name="%s">`+"\n", esc(p.Name))
	y = text(b, 12, y+18, "title", "start", title, `font-size="15" font-weight="bold"`)
	y += titleHeight - 18
	var messages []string
	if p.Note != "" {
		messages = append(messages, "note: "+p.Note)
	}
	if p.ReadError != nil {
		messages = append(messages, "cannot read budgets: "+p.ReadError.Error())
	}
	if cause := p.BlockedThroughout(); cause != "" {
		messages = append(messages, "blocked: every reason, because "+cause)
	}
	for _, s := range r.Shifts() {
		messages = append(messages, r.ShiftWords(s))
	}
	local := r.LocalEdges(p)
	for _, b := range p.Budgets {
		if note := p.BudgetNotes[b.Index]; note != "" {
			messages = append(messages, "note: "+b.Name()+": "+note)
		}
		if edges := local[b.Index]; edges != "" {
			messages = append(messages, fmt.Sprintf("local time: budgets[%d] %s", b.Index, edges))
		}
	}
	for _, pr := range p.Problems {
		if pr.Effect == budget.RejectedByAPIServer {
			messages = append(messages, "rejected by the API server: "+pr.Error())
		}
	}
	for _, m := range messages {
		class := "message"
		if strings.HasPrefix(m, "blocked") || strings.HasPrefix(m, "rejected") || strings.HasPrefix(m, "cannot") {
			class = "message problem"
		}
		for _, line := range wrap(m, wrapAt) {
			y = text(b, 12, y+messageLine-3, class, "start", line, `fill="`+messageColour(class)+`"`) + 3
		}
	}
	if p.Rejected() {
		y = text(b, 12, y+messageLine-3, "message problem", "start", "not explained: "+rejectedWords, `fill="`+colourBlocked+`"`) + 3
	}
	if p.ReadError != nil || p.Rejected() {
		b.WriteString("</g>\n")
		return y
	}
	lanesTop := y + 4
	y = lanesTop
	for _, reason := range r.Reasons {
		y = drawLane(b, r, p, reason, y)
	}
	y = drawDays(b, r, lanesTop, y)
	drawShifts(b, r, lanesTop, y-axisHeight)
	drawNow(b, r, lanesTop, y-axisHeight)
	b.WriteString("</g>\n")
	return y
}

func messageColour(class string) string {
	if strings.Contains(class, "problem") {
		return colourBlocked
	}
	return "#555555"
}

func drawLane(b *bytes.Buffer, r *Report, p *Pool, reason budget.Reason, y float64) float64 {
	fmt.Fprintf(b, `<g class="lane" data-reason="%s">`+"\n", reason)
	top := y + edgeBand
	text(b, labelWidth-10, top+laneHeight/2+4, "lane-label", "end", string(reason), `font-size="13" font-weight="bold"`)
	stretches := displayStretches(p.Timeline[reason])
	for _, s := range stretches {
		x0, x1 := xOf(r, s.From), xOf(r, s.To)
		class, fill, label := segmentStyle(s.Allowance)
		why := p.Why(reason, s.Allowance, r.Counts())
		fmt.Fprintf(b, `<rect class="seg %s" x="%.2f" y="%.2f" width="%.2f" height="%d" fill="%s" stroke="#ffffff" stroke-width="1"><title>%s</title></rect>`+"\n",
			class, x0, top, x1-x0, laneHeight, fill, esc(fmt.Sprintf("%s %s → %s: %s (%s)", reason, s.From.In(r.Location).Format("Mon 02 Jan 15:04"), s.To.In(r.Location).Format("Mon 02 Jan 15:04"), s.Allowance, why)))
		if label == "unlimited" && !fits(label, x1-x0) {
			label = "∞"
		}
		if fits(label, x1-x0) {
			colour := "#ffffff"
			if class == "limited" {
				colour = colourText
			}
			text(b, (x0+x1)/2, top+laneHeight/2+4, "seg-label", "middle", label, `fill="`+colour+`" font-weight="bold"`)
		}
	}
	// Window edges: where the allowance changes, labelled with the clock time
	// on the first of two rows where the label does not overlap its neighbour.
	lastLabel := [2]float64{math.Inf(-1), math.Inf(-1)}
	for i := 1; i < len(stretches); i++ {
		x := xOf(r, stretches[i].From)
		fmt.Fprintf(b, `<line class="edge-line" x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="%s" stroke-width="1"/>`+"\n", x, top-3, x, top+laneHeight, colourText)
		if x+14 > chartWidth {
			continue
		}
		for row := range lastLabel {
			if x-lastLabel[row] >= minEdgeGap {
				text(b, x, top-4-11*float64(row), "edge", "middle", stretches[i].From.In(r.Location).Format("15:04"), `font-size="10" fill="#444444"`)
				lastLabel[row] = x
				break
			}
		}
	}
	b.WriteString("</g>\n")
	return top + laneHeight + laneGap
}

// displayStretches merges neighbours that look the same on the chart: when
// only the binding budget changes (a tie begins or ends), the count does not,
// and a person reading the chart should not see an edge there. The text and
// JSON outputs keep them apart.
func displayStretches(ss []budget.Stretch) []budget.Stretch {
	var out []budget.Stretch
	for _, s := range ss {
		if n := len(out); n > 0 {
			prevClass, _, prevLabel := segmentStyle(out[n-1].Allowance)
			class, _, label := segmentStyle(s.Allowance)
			if prevClass == class && prevLabel == label {
				out[n-1].To = s.To
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// segmentStyle gives a stretch its class, fill and label.
func segmentStyle(a budget.Allowance) (class, fill, label string) {
	switch {
	case a.Blocked:
		return "blocked", "url(#blocked-stripes)", "blocked"
	case a.Unlimited:
		return "unlimited", colourUnlimited, "unlimited"
	case a.Count == 0:
		return "zero", colourZero, "0"
	default:
		return "limited", colourLimited, fmt.Sprint(a.Count)
	}
}

// fits reports whether label fits in width at the 12px font.
func fits(label string, width float64) bool {
	return textWidth(label)+6 <= width
}

// drawDays draws midnight gridlines through the lanes and day labels below.
func drawDays(b *bytes.Buffer, r *Report, top, bottom float64) float64 {
	b.WriteString(`<g class="axis">` + "\n")
	fmt.Fprintf(b, `<line x1="%d" y1="%.2f" x2="%d" y2="%.2f" stroke="%s"/>`+"\n", labelWidth, bottom, labelWidth+plotWidth, bottom, colourText)
	days := r.To.Sub(r.From).Hours() / 24
	step := max(1, int(math.Ceil(days*80/plotWidth))) // keep day labels 80px apart
	from := r.From.In(r.Location)
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, r.Location)
	for i := 0; !day.After(r.To); i++ {
		if !day.Before(r.From) && i%step == 0 {
			x := xOf(r, day)
			fmt.Fprintf(b, `<line class="day-line" x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="%s" stroke-dasharray="2,3"/>`+"\n", x, top, x, bottom+5, colourGrid)
			if x+60 <= chartWidth {
				text(b, x+3, bottom+17, "day", "start", day.Format("Mon 02 Jan"), `font-size="11"`)
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	// The range's own ends, so a chart that starts mid-day says when.
	text(b, labelWidth, bottom+29, "range", "start", "from "+from.Format("Mon 02 Jan 15:04"), `font-size="10" fill="#666666"`)
	text(b, labelWidth+plotWidth, bottom+29, "range", "end", "to "+r.To.In(r.Location).Format("Mon 02 Jan 15:04"), `font-size="10" fill="#666666"`)
	b.WriteString("</g>\n")
	return bottom + axisHeight + 4
}

// drawShifts marks each daylight-saving change of the display zone with a
// dotted line through the lanes, labelled with the new zone at the top.
func drawShifts(b *bytes.Buffer, r *Report, top, axis float64) {
	for _, s := range r.Shifts() {
		x := xOf(r, s.At)
		fmt.Fprintf(b, `<g class="shift"><line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="#6a1b9a" stroke-width="1.5" stroke-dasharray="1,3"/>`, x, top, x, axis)
		text(b, x+3, top+9, "shift-label", "start", "→ "+s.After.Abbreviation, `font-size="10" fill="#6a1b9a"`)
		b.WriteString("<title>" + esc(r.ShiftWords(s)) + "</title></g>\n")
	}
}

// drawNow marks the current instant with a dashed line through the lanes,
// labelled below the axis where no window-edge label can collide with it.
func drawNow(b *bytes.Buffer, r *Report, top, axis float64) {
	if r.Now.IsZero() || r.Now.Before(r.From) || !r.Now.Before(r.To) {
		return
	}
	x := xOf(r, r.Now)
	fmt.Fprintf(b, `<g class="now"><line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="#1a237e" stroke-width="2" stroke-dasharray="5,3"/>`, x, top+edgeBand-2, x, axis+20)
	text(b, x, axis+41, "now-label", "middle", "now "+r.Now.In(r.Location).Format("15:04"), `font-size="10" fill="#1a237e" font-weight="bold"`)
	b.WriteString("</g>\n")
}

func drawLegend(b *bytes.Buffer, y float64) float64 {
	b.WriteString(`<g class="legend">` + "\n")
	items := []struct{ class, fill, label string }{
		{"unlimited", colourUnlimited, "unlimited: no active budget covers the reason"},
		{"limited", colourLimited, "N: at most N more nodes at once"},
		{"zero", colourZero, "0: a budget holds every node"},
		{"blocked", "url(#blocked-stripes)", "blocked: an invalid budget stops every reason"},
	}
	x := 12.0
	for _, it := range items {
		width := 28 + textWidth(it.label) + 24
		if x+width > chartWidth {
			x, y = 12, y+22
		}
		fmt.Fprintf(b, `<rect class="legend-swatch %s" x="%.2f" y="%.2f" width="22" height="14" fill="%s"/>`+"\n", it.class, x, y+4, it.fill)
		text(b, x+28, y+15, "legend-label", "start", it.label)
		x += width
	}
	b.WriteString("</g>\n")
	return y + legendHeight - 20
}

// textWidth estimates the width of s at the 12px font; generous so that
// labels never run into each other.
func textWidth(s string) float64 { return float64(len([]rune(s))) * 7.2 }

// text writes one text element and returns y.
func text(b *bytes.Buffer, x, y float64, class, anchor, s string, attrs ...string) float64 {
	extra := strings.Join(attrs, " ")
	if !strings.Contains(extra, "fill=") {
		extra += ` fill="` + colourText + `"`
	}
	fmt.Fprintf(b, `<text class="%s" x="%.2f" y="%.2f" text-anchor="%s" %s>%s</text>`+"\n", class, x, y, anchor, strings.TrimSpace(extra), esc(s))
	return y
}

func esc(s string) string {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(s))
	return buf.String()
}

// wrap breaks s into lines of at most width characters at spaces.
func wrap(s string, width int) []string {
	var lines []string
	for len(s) > width {
		cut := strings.LastIndex(s[:width], " ")
		if cut <= 0 {
			cut = width
		}
		lines = append(lines, s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(lines, s)
}
