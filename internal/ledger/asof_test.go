package ledger_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
)

func TestParseService(t *testing.T) {
	for v, want := range map[string]host.Service{
		"443/tcp http nginx 1.20.1":           {Port: 443, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.20.1"},
		"80/tcp http Apache httpd 2.4.58":     {Port: 80, Protocol: "tcp", Service: "http", Product: "Apache httpd", Version: "2.4.58"},
		"3389/tcp ms-wbt-server":              {Port: 3389, Protocol: "tcp", Service: "ms-wbt-server"},
		"53/udp domain":                       {Port: 53, Protocol: "udp", Service: "domain"},
		"22/tcp ssh OpenSSH for Ubuntu 8.9p1": {Port: 22, Protocol: "tcp", Service: "ssh", Product: "OpenSSH for Ubuntu", Version: "8.9p1"},
	} {
		got, ok := ledger.ParseService(v)
		if diff := cmp.Diff(want, got); !ok || diff != "" {
			t.Errorf("%q (-want +got):\n%s", v, diff)
		}
	}
	for _, bad := range []string{"", "http", "x/tcp http", "443 http"} {
		if _, ok := ledger.ParseService(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestAsOfUndoesEachRow rebuilds a host through each kind of row and checks
// that Diff of the rebuilt state against the stored one gives the rows back.
func TestAsOfUndoesEachRow(t *testing.T) {
	old := host.Host{Host: "www.example.com", Domain: "example.com", DNS: host.DNS{A: []string{"192.0.2.1"}},
		NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.18.0"}},
		HTTPStatusCode:  200, HTTPTitle: "Old", Products: []string{"nginx"},
		Cert: host.Cert{SHA256Fingerprint: "aa", SubjectCommonName: "www.example.com", NotAfter: 1798761600}}
	old.Derive()
	now := host.Host{Host: "www.example.com", Domain: "example.com", DNS: host.DNS{A: []string{"192.0.2.2"}, CNAME: []string{"edge.example.net"}},
		NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.20.1"}, {Port: 8443, Protocol: "tcp"}},
		HTTPStatusCode:  301, HTTPTitle: "New", Products: []string{"nginx", "php"},
		Cert: host.Cert{SHA256Fingerprint: "bb", SubjectCommonName: "www.example.com", NotAfter: 1830297600}}
	now.Derive()
	rows := ledger.Compare(&old, now)
	if len(rows) != 9 {
		t.Fatalf("compare: %d rows: %+v", len(rows), rows)
	}
	past, ok := ledger.AsOf(now, rows)
	if !ok {
		t.Fatal("not ok")
	}
	if back := ledger.Compare(&past, now); cmp.Diff(rows, back) != "" {
		t.Errorf("the rebuilt state compares differently (-rows +back):\n%s", cmp.Diff(rows, back))
	}
	if past.DNS.A[0] != "192.0.2.1" || len(past.DNS.CNAME) != 0 || past.HTTPTitle != "Old" || past.HTTPStatusCode != 200 ||
		len(past.NetworkPorts) != 1 || past.NetworkServices[0].Version != "1.18.0" || past.Cert.SHA256Fingerprint != "aa" || past.IsResolvable != true {
		t.Errorf("rebuilt: %+v", past)
	}
	if _, ok := ledger.AsOf(now, []ledger.Change{{Category: ledger.CategoryHost, Change: ledger.New, Value: now.Host}}); ok {
		t.Error("a host undone past its first row still exists")
	}
	states := ledger.States(now, append(setTime(rows, 20), ledger.Change{Category: ledger.CategoryHost, Change: ledger.New, Value: now.Host, Time: 10}))
	if len(states) != 2 || states[0].Since != 20 || states[0].Until != 0 || states[1].Since != 10 || states[1].Until != 20 || states[1].Host.HTTPTitle != "Old" {
		t.Errorf("states: %+v", states)
	}
}

func setTime(cs []ledger.Change, ts int64) []ledger.Change {
	out := make([]ledger.Change, len(cs))
	for i, c := range cs {
		c.Time = ts
		out[i] = c
	}
	return out
}
