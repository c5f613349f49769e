package enrich

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func rng(cidr, provider, region string, priority int) Range {
	return Range{Prefix: netip.MustParsePrefix(cidr), Info: Info{Provider: provider, Region: region, Kind: KindCloud}, Priority: priority}
}

func TestTableLookup(t *testing.T) {
	table := NewTable([]Range{
		rng("10.0.0.0/8", "outer", "r8", 0),
		rng("10.1.0.0/16", "inner", "r16", 0),
		rng("10.1.2.0/24", "innermost", "r24", 0),
		rng("10.1.2.0/24", "loser", "", 0),      // identical, same priority, later: loses
		rng("10.2.0.0/16", "low", "", 0),        // identical, lower priority: loses
		rng("10.2.0.0/16", "high", "", 5),       // identical, higher priority: wins
		rng("10.3.0.0/16", "outer", "", 0),      // same provider: inherits region
		rng("255.255.255.255/32", "top", "", 0), // last address
		rng("0.0.0.0/32", "bottom", "", 0),      // first address
		rng("192.0.2.7/24", "masked", "", 0),    // host bits are masked
		rng("2001:db8::/32", "v6", "a", 0),
		rng("2001:db8:1::/48", "v6inner", "b", 0),
		rng("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120", "v6top", "", 0),
	})
	tests := []struct {
		ip       string
		provider string
		region   string
		found    bool
	}{
		{"9.255.255.255", "", "", false},
		{"10.0.0.0", "outer", "r8", true},
		{"10.1.0.0", "inner", "r16", true},
		{"10.1.1.255", "inner", "r16", true},
		{"10.1.2.0", "innermost", "r24", true},
		{"10.1.2.255", "innermost", "r24", true},
		{"10.1.3.0", "inner", "r16", true},
		{"10.1.255.255", "inner", "r16", true},
		{"10.2.3.4", "high", "", true},
		{"10.3.0.1", "outer", "r8", true},
		{"10.255.255.255", "outer", "r8", true},
		{"11.0.0.0", "", "", false},
		{"255.255.255.255", "top", "", true},
		{"255.255.255.254", "", "", false},
		{"0.0.0.0", "bottom", "", true},
		{"0.0.0.1", "", "", false},
		{"192.0.2.1", "masked", "", true},
		{"::ffff:10.1.2.3", "innermost", "r24", true},
		{"2001:db8::1", "v6", "a", true},
		{"2001:db8:1:ffff::1", "v6inner", "b", true},
		{"2001:db8:2::", "v6", "a", true},
		{"2001:db9::", "", "", false},
		{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "v6top", "", true},
	}
	for _, tt := range tests {
		got, ok := table.Lookup(netip.MustParseAddr(tt.ip))
		if ok != tt.found || got.Provider != tt.provider || got.Region != tt.region {
			t.Errorf("Lookup(%s) = %+v, %v; want provider %q region %q, %v", tt.ip, got, ok, tt.provider, tt.region, tt.found)
		}
	}
	if _, ok := table.Lookup(netip.Addr{}); ok {
		t.Error("Lookup(zero Addr) found a range")
	}
}

func TestTableEmptyAndWholeSpace(t *testing.T) {
	if _, ok := NewTable(nil).Lookup(netip.MustParseAddr("1.2.3.4")); ok {
		t.Error("empty table found a range")
	}
	table := NewTable([]Range{rng("0.0.0.0/0", "all", "", 0), rng("::/0", "all6", "", 0), rng("128.0.0.0/1", "half", "", 0)})
	for ip, want := range map[string]string{"0.0.0.0": "all", "127.255.255.255": "all", "128.0.0.0": "half", "255.255.255.255": "half", "::": "all6", "ffff::": "all6"} {
		if got, _ := table.Lookup(netip.MustParseAddr(ip)); got.Provider != want {
			t.Errorf("Lookup(%s) = %q, want %q", ip, got.Provider, want)
		}
	}
}

// naive is the reference: scan every range and keep the longest (then
// highest priority, then first) match.
func naive(ranges []Range, ip netip.Addr) (Info, bool) {
	best := -1
	for i, r := range ranges {
		if !r.Prefix.Contains(ip) {
			continue
		}
		if best < 0 || r.Prefix.Bits() > ranges[best].Prefix.Bits() ||
			r.Prefix.Bits() == ranges[best].Prefix.Bits() && r.Priority > ranges[best].Priority {
			best = i
		}
	}
	if best < 0 {
		return Info{}, false
	}
	return ranges[best].Info, true
}

func TestTableMatchesNaiveLookup(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ranges []Range
	for i := range 400 {
		var addr netip.Addr
		var bits int
		if i%2 == 0 {
			// Cluster IPv4 prefixes in 10/8 so they nest often.
			addr = netip.AddrFrom4([4]byte{10, byte(r.IntN(4)), byte(r.IntN(256)), byte(r.IntN(256))})
			bits = 8 + r.IntN(25)
		} else {
			var b [16]byte
			b[0], b[1], b[2] = 0x20, 0x01, byte(r.IntN(4))
			b[3] = byte(r.IntN(256))
			addr = netip.AddrFrom16(b)
			bits = 16 + r.IntN(113)
		}
		p := netip.PrefixFrom(addr, bits).Masked()
		// Distinct providers so inheritance does not apply.
		ranges = append(ranges, Range{Prefix: p, Info: Info{Provider: string(rune('a' + i%26)), Region: p.String()}, Priority: r.IntN(3)})
	}
	table := NewTable(ranges)
	for range 5000 {
		var ip netip.Addr
		if r.IntN(2) == 0 {
			ip = netip.AddrFrom4([4]byte{10, byte(r.IntN(5)), byte(r.IntN(256)), byte(r.IntN(256))})
		} else {
			var b [16]byte
			b[0], b[1], b[2], b[3] = 0x20, 0x01, byte(r.IntN(5)), byte(r.IntN(256))
			for j := 4; j < 16; j++ {
				b[j] = byte(r.IntN(256))
			}
			ip = netip.AddrFrom16(b)
		}
		wantInfo, wantOK := naive(ranges, ip)
		gotInfo, gotOK := table.Lookup(ip)
		// Identical prefix and priority: the earlier range wins in both.
		if gotOK != wantOK || gotInfo.Region != wantInfo.Region {
			t.Fatalf("Lookup(%s) = %+v, %v; want %+v, %v", ip, gotInfo, gotOK, wantInfo, wantOK)
		}
	}
}

func TestTableInheritsFromSameProvider(t *testing.T) {
	table := NewTable([]Range{
		{Prefix: netip.MustParsePrefix("3.0.0.0/15"), Info: Info{Provider: "aws", Region: "us-east-1", Service: "EC2", Kind: KindCloud}, Priority: priorityVendor},
		{Prefix: netip.MustParsePrefix("3.0.5.0/24"), Info: Info{Provider: "aws", Kind: KindCloud}, Priority: priorityCompiled},
		{Prefix: netip.MustParsePrefix("3.0.6.0/24"), Info: Info{Provider: "cloudfront", Kind: KindCDN}, Priority: priorityCompiled},
	})
	tests := map[string]Info{
		"3.0.5.1": {Provider: "aws", Region: "us-east-1", Service: "EC2", Kind: KindCloud},
		"3.0.6.1": {Provider: "cloudfront", Kind: KindCDN},
		"3.0.7.1": {Provider: "aws", Region: "us-east-1", Service: "EC2", Kind: KindCloud},
	}
	for ip, want := range tests {
		got, _ := table.Lookup(netip.MustParseAddr(ip))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Lookup(%s) mismatch (-want +got):\n%s", ip, diff)
		}
	}
}
