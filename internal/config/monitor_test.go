package config

import (
	"flag"
	"io"
	"slices"
	"testing"
	"time"
)

func TestMonitorFlags(t *testing.T) {
	env := map[string]string{"PERISCOPE_MONITOR_ORG_RATE": "2.5", "PERISCOPE_MONITOR_INTERVAL": "6h"}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m, err := RegisterMonitor(fs, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--monitor-ports", "80, 443", "--monitor-resolvers", "127.0.0.1:5353"}); err != nil {
		t.Fatal(err)
	}
	ports, err := m.PortList()
	if err != nil || !slices.Equal(ports, []int{80, 443}) || m.OrgRate != 2.5 || m.Interval != 6*time.Hour || !m.Enabled || m.Rate != 50 {
		t.Fatalf("%+v %v %v", m, ports, err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Monitor{
		{Enabled: true, Ports: "80,99999", Resolvers: "x", Interval: time.Hour, Rate: 1, OrgRate: 1, Concurrency: 1, Timeout: time.Second},
		{Enabled: true, Ports: "80", Resolvers: "", Interval: time.Hour, Rate: 1, OrgRate: 1, Concurrency: 1, Timeout: time.Second},
		{Enabled: true, Ports: "80", Resolvers: "x", Interval: time.Hour, Rate: 0, OrgRate: 1, Concurrency: 1, Timeout: time.Second},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	if _, err := RegisterMonitor(flag.NewFlagSet("x", flag.ContinueOnError), func(k string) string {
		return map[string]string{"PERISCOPE_MONITOR": "maybe"}[k]
	}); err == nil {
		t.Error("PERISCOPE_MONITOR=maybe accepted")
	}
}
