package scan

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/host"
)

func TestNmapVersionScan(t *testing.T) {
	hosts, st, err := collect(t, ParseNmap, "testdata/libnmap_2_hosts_version.xml")
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 2 || len(hosts) != 2 {
		t.Fatalf("stats %+v", st)
	}
	// "localhost" is a single-label name: the host is indexed by its IP.
	if h := hosts[0]; h.Host != "127.0.0.1" || len(h.NetworkServices) != 5 || h.FirstSeen != 1361737701 {
		t.Errorf("localhost = %+v", h)
	}
	s := hosts[1]
	if s.Host != "scanme.nmap.org" || s.Domain != "nmap.org" || s.IPAddress != "74.207.244.221" ||
		!cmp.Equal(s.DNS.PTR, []string{"scanme.nmap.org"}) || !cmp.Equal(s.DNS.A, []string{"74.207.244.221"}) {
		t.Errorf("scanme = %+v", s)
	}
	var ports []int
	for _, svc := range s.NetworkServices {
		ports = append(ports, svc.Port)
		if svc.Protocol != "tcp" || svc.FirstSeen != 1361737830 {
			t.Errorf("service %+v", svc)
		}
	}
	if len(ports) == 0 {
		t.Error("scanme has no open ports")
	}
}

func TestNmapProductsAndBanners(t *testing.T) {
	hosts, _, err := collect(t, ParseNmap, "testdata/libnmap_1_os_banner_scripts.xml")
	if err != nil || len(hosts) != 1 {
		t.Fatalf("%d hosts, err %v", len(hosts), err)
	}
	want := host.Service{Port: 22, Protocol: "tcp", Service: "ssh", Product: "OpenSSH", Version: "5.3", Banner: "protocol 2.0", FirstSeen: 1368156706, LastSeen: 1368156706}
	if diff := cmp.Diff(want, hosts[0].NetworkServices[0]); diff != "" {
		t.Errorf("ssh service (-want +got):\n%s", diff)
	}
	if !cmp.Equal(hosts[0].DNS.PTR, []string(nil)) {
		t.Errorf("single-label PTR name kept: %v", hosts[0].DNS.PTR)
	}
}

func TestNmapHostStates(t *testing.T) {
	in := `<nmaprun start="100">
<host><status state="down"/><address addr="192.0.2.1" addrtype="ipv4"/></host>
<host><status state="up"/><address addr="00:11:22:33:44:55" addrtype="mac"/></host>
<host><status state="up"/><address addr="2001:db8::5" addrtype="ipv6"/><hostnames><hostname name="a.example.com" type="user"/><hostname name="b.example.com" type="user"/></hostnames>
<ports><port protocol="tcp" portid="443"><state state="open"/><service name="http" tunnel="ssl"/><script id="banner" output="hello"/></port>
<port protocol="tcp" portid="80"><state state="filtered"/></port>
<port protocol="udp" portid="x"><state state="closed"/></port></ports></host>
<host><status state="up"/><address addr="192.0.2.9" addrtype="ipv4"/><ports><port protocol="tcp" portid="99999"><state state="open"/></port></ports></host>
</nmaprun>`
	var hosts []host.Host
	st, err := ParseNmap(strings.NewReader(in), func(h host.Host) error { hosts = append(hosts, h); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.SkippedBy["hosts down"] != 1 || len(st.Skips) != 1 || st.Skips[0].Line == 0 || st.Skips[0].Reason != "hosts down" {
		t.Errorf("skip reasons %v, positions %+v", st.SkippedBy, st.Skips)
	}
	if st.Records != 4 || st.Skipped != 1 || st.Rejected != 2 || len(hosts) != 2 {
		t.Fatalf("stats %+v, %d hosts", st, len(hosts))
	}
	if r := st.Rejects[0]; r.Line != 3 || !strings.Contains(r.Reason, "no IP") {
		t.Errorf("reject %v", r)
	}
	want := []host.Service{{Port: 443, Protocol: "tcp", Service: "https", Banner: "hello", FirstSeen: 100, LastSeen: 100}}
	for i, name := range []string{"a.example.com", "b.example.com"} {
		h := hosts[i]
		if h.Host != name || h.IPAddress != "2001:db8::5" || !cmp.Equal(h.DNS.AAAA, []string{"2001:db8::5"}) {
			t.Errorf("host %d = %+v", i, h)
		}
		if diff := cmp.Diff(want, h.NetworkServices); diff != "" {
			t.Errorf("services (-want +got):\n%s", diff)
		}
	}
}

func TestNmapTruncated(t *testing.T) {
	hosts, st, err := collect(t, ParseNmap, "testdata/nmap_truncated.xml")
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if len(hosts) != 1 || hosts[0].Host != "127.0.0.1" || st.Hosts != 1 {
		t.Errorf("complete hosts before the cut: %d (%+v)", len(hosts), st)
	}
	if pe.Line < 52 || pe.Offset == 0 || !strings.Contains(err.Error(), "line 52") || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("error %q (line %d offset %d) should name the host at line 52 and the position", err, pe.Line, pe.Offset)
	}
}

func TestNmapReportedError(t *testing.T) {
	_, _, err := collect(t, ParseNmap, "testdata/ullaakut_scan_error_other.xml")
	if err == nil || !strings.Contains(err.Error(), "Unsupported error") {
		t.Errorf("err = %v, want nmap's errormsg", err)
	}
}

func TestNmapNotXML(t *testing.T) {
	for _, in := range []string{"", "hello", `{"ip":"1.2.3.4"}`, "<foo/>"} {
		_, err := ParseNmap(strings.NewReader(in), func(host.Host) error { return nil })
		if err == nil {
			t.Errorf("ParseNmap(%q) succeeded", in)
		}
	}
}

func TestNmapFullscan(t *testing.T) {
	hosts, st, err := collect(t, ParseNmap, "testdata/libnmap_fullscan.xml")
	if err != nil || len(hosts) == 0 || st.Rejected != 0 {
		t.Fatalf("hosts %d stats %+v err %v", len(hosts), st, err)
	}
}

// The AGPL scans2any files are not in the repository; use them when the
// shared data directory is present.
func TestNmapSharedGOAD(t *testing.T) {
	const dir = "/work/shared/data/scans/nmap/"
	if _, err := os.Stat(dir + "scans2any_goad-mini.xml"); err != nil {
		t.Skip("shared data not present")
	}
	full, _, err := collect(t, ParseNmap, dir+"scans2any_goad-mini.xml")
	if err != nil || len(full) == 0 {
		t.Fatalf("full: %d hosts, err %v", len(full), err)
	}
	cut, _, err := collect(t, ParseNmap, dir+"scans2any_goad-mini-incomplete.xml")
	var pe *Error
	if !errors.As(err, &pe) || pe.Offset == 0 {
		t.Fatalf("incomplete: err = %v, want *Error with position", err)
	}
	if len(cut) == 0 || len(cut) >= len(full) {
		t.Errorf("incomplete yielded %d hosts, full %d", len(cut), len(full))
	}
	t.Logf("goad-mini: %d hosts; incomplete: %d hosts then %v", len(full), len(cut), err)
}

func TestMasscanSharedGOAD(t *testing.T) {
	const file = "/work/shared/data/scans/masscan/scans2any_goad-mini.json"
	if _, err := os.Stat(file); err != nil {
		t.Skip("shared data not present")
	}
	hosts, st, err := collect(t, ParseMasscan, file)
	if err != nil || st.Rejected != 0 || len(hosts) != 21 {
		t.Fatalf("hosts %d stats %+v err %v", len(hosts), st, err)
	}
}
