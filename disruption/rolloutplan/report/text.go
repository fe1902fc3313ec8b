package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
)

// Text writes a table of the plans, then each plan's waves, its current
// wave's gates and what stopped it.
func Text(w io.Writer, plans []Plan) error {
	if len(plans) == 0 {
		_, err := fmt.Fprintln(w, "No RolloutPlans: every NodePool rolls drift at its own budgets.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tPHASE\tWAVE\tREADY\tHELD\tMESSAGE")
	for _, p := range plans {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", p.Name, phase(p), p.CurrentWave, p.Ready, p.Held, p.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range plans {
		if err := planText(w, p); err != nil {
			return err
		}
	}
	return nil
}

func phase(p Plan) string {
	if p.Paused && p.Phase != string(v1alpha1.PhasePaused) {
		return p.Phase + " (paused)"
	}
	return p.Phase
}

func planText(w io.Writer, p Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s:", p.Name)
	if !p.Current {
		b.WriteString(" (status not yet updated for the latest spec)")
	}
	if st := p.Status.StartedAt; st != nil {
		fmt.Fprintf(&b, " pass started %s", st.UTC().Format(time.RFC3339))
	} else if c := p.Status.CompletedAt; c != nil {
		fmt.Fprintf(&b, " last pass completed %s", c.UTC().Format(time.RFC3339))
	} else {
		b.WriteString(" no pass yet")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  WAVE\tPHASE\tNODEPOOLS\tNODECLAIMS\tDRIFTED\tREPLACED\tSOAK")
	for _, wv := range p.Waves {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\t%s\n", wv.Name, wv.Phase, pools(wv), wv.NodeClaims, wv.Drifted, wv.Replaced, soak(p, wv))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, wv := range p.Waves {
		if wv.Name != p.CurrentWave || len(wv.Gates) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  gates of wave %s:\n", wv.Name)
		for _, g := range wv.Gates {
			fmt.Fprintf(&b, "    %-18s  %-7s  %s\n", g.Name, g.Result, g.Message)
		}
	}
	if f := p.Failure; f != nil {
		fmt.Fprintf(&b, "  stopped at wave %s (%s, %s): %s\n", f.Wave, f.Reason, f.At.UTC().Format(time.RFC3339), f.Message)
		if f.Reason == v1alpha1.ReasonAborted {
			fmt.Fprintf(&b, "  `karpgate resume NODEPOOL` lifts a hold by hand; `karpgate rollout resume %s` rolls the wave again\n", p.Name)
		} else {
			fmt.Fprintf(&b, "  fix the cause, then `karpgate rollout resume %s` rolls the wave again\n", p.Name)
		}
	}
	if len(p.Conflicts) > 0 {
		fmt.Fprintf(&b, "  left to an older plan: %s\n", strings.Join(p.Conflicts, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pools(wv Wave) string {
	if len(wv.NodePools) == 0 {
		return "-"
	}
	var parts []string
	frozen := map[string]bool{}
	for _, f := range wv.Frozen {
		frozen[f] = true
	}
	rolling := map[string]bool{}
	for _, r := range wv.Rolling {
		rolling[r] = true
	}
	for _, n := range wv.NodePools {
		switch {
		case frozen[n]:
			n += " (frozen)"
		case rolling[n] && len(wv.Rolling) < len(wv.NodePools):
			n += " (rolling)"
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, ", ")
}

func soak(p Plan, wv Wave) string {
	if wv.Name == p.CurrentWave && p.SoakLeft != nil {
		return fmt.Sprintf("%s left of %s", p.SoakLeft.Duration, wv.Soak.Duration)
	}
	return wv.Soak.String()
}
