package budget

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string // substring
	}{
		{in: "8h", want: 8 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "8h0m0s", want: 8 * time.Hour},
		{in: "8h0s", want: 8 * time.Hour},
		{in: "0m", want: 0},
		{in: "30s", wantErr: "seconds are not allowed"},
		{in: "1h30m15s", wantErr: "seconds are not allowed"},
		{in: "100ms", wantErr: "seconds are not allowed"},
		{in: "1d", wantErr: `"1d": days are not allowed; write 24h`},
		{in: "7d", wantErr: "write 168h"},
		{in: "1w", wantErr: "days, weeks and years are not allowed"},
		{in: "1.5h", wantErr: "fractions are not allowed"},
		{in: "1H", wantErr: "units are lower case; write 1h"},
		{in: "-1h", wantErr: "is negative"},
		{in: "8", wantErr: `"8" has no unit; write 8h or 8m`},
		{in: "30m1h", wantErr: "hours come before minutes"},
		{in: "1h 30m", wantErr: "contains spaces"},
		{in: "", wantErr: "empty duration"},
		{in: "PT8H", wantErr: "ISO 8601"},
		{in: "999999999999h", wantErr: "too long"},
		{in: "8x", wantErr: `"8x" is not a budget duration`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDuration(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
