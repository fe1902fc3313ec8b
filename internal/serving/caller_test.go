package serving

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseTrustedSources(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      []string
		want    string // TrustedSources.String()
		wantErr string
		// contains and not are addresses the parsed ranges must and must
		// not hold.
		contains, not []string
	}{
		{name: "CIDRs and single addresses", in: []string{"10.0.16.0/28", "10.0.32.7", "fd00::/64"}, want: "10.0.16.0/28,10.0.32.7/32,fd00::/64",
			contains: []string{"10.0.16.15", "10.0.32.7", "::ffff:10.0.16.1", "fd00::1"}, not: []string{"10.0.16.16", "10.0.32.8", "fd01::1"}},
		{name: "host bits are masked", in: []string{"10.0.16.9/28"}, want: "10.0.16.0/28", contains: []string{"10.0.16.0"}},
		{name: "IPv4 written in IPv6 is IPv4", in: []string{"::ffff:10.0.16.0/124"}, want: "10.0.16.0/28", contains: []string{"10.0.16.3"}},
		{name: "blanks are skipped", in: []string{" 10.0.0.1 ", ""}, want: "10.0.0.1/32"},
		{name: "nothing trusts no one", in: nil, want: "", not: []string{"10.0.0.1", "::1"}},
		{name: "every IPv4 address is refused", in: []string{"0.0.0.0/0"}, wantErr: `"0.0.0.0/0" holds every address`},
		{name: "every IPv6 address is refused", in: []string{"10.0.0.0/8", "::/0"}, wantErr: `"::/0" holds every address`},
		{name: "not an address", in: []string{"10.0.0.0/33"}, wantErr: `"10.0.0.0/33" is not a CIDR or an address; write it like 10.0.16.0/28`},
		{name: "a name is not an address", in: []string{"apiserver.internal"}, wantErr: `"apiserver.internal" is not a CIDR or an address`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTrustedSources(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want {
				t.Errorf("parsed %q, want %q", got, tt.want)
			}
			for _, a := range tt.contains {
				if !got.Contains(netip.MustParseAddr(a)) {
					t.Errorf("%s is not trusted", a)
				}
			}
			for _, a := range tt.not {
				if got.Contains(netip.MustParseAddr(a)) {
					t.Errorf("%s is trusted", a)
				}
			}
		})
	}
}

func TestSourceOf(t *testing.T) {
	for _, tt := range []struct{ remote, want string }{
		{"10.0.0.7:443", "10.0.0.7"},
		{"[::ffff:10.0.0.7]:443", "10.0.0.7"},
		{"[fe80::1%eth0]:443", "fe80::1"},
		{"10.0.0.7", "10.0.0.7"},
		{"pipe", ""},
	} {
		got, ok := SourceOf(tt.remote)
		if ok != (tt.want != "") || (ok && got.String() != tt.want) {
			t.Errorf("SourceOf(%q) = %v %v, want %q", tt.remote, got, ok, tt.want)
		}
	}
}
