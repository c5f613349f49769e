package ledger_test

import (
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/scan"
)

// BenchmarkDiff is the ledger's CPU cost per stored host merged, with a
// recorded nmap observation: the figure to add to a host write's cost.
func BenchmarkDiff(b *testing.B) {
	t := &testing.T{}
	full := observations(t, scan.Nmap, "libnmap_2_hosts.xml")["127.0.0.1"]
	obs := observations(t, scan.Nmap, "libnmap_1_hosts_banner_ports.xml")["127.0.0.1"]
	stored := host.Merge(host.Host{}, full)
	b.Run("merge", func(b *testing.B) {
		for b.Loop() {
			host.Merge(stored, obs)
		}
	})
	b.Run("merge+diff+prune", func(b *testing.B) {
		for b.Loop() {
			merged := host.Merge(stored, obs)
			cs := ledger.Diff(&stored, &merged, ledger.Source{Name: "nmap", Observed: &obs, Ports: []int{22, 25, 80, 443}})
			ledger.Prune(&merged, cs)
		}
	})
}
