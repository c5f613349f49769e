package scan

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
)

// nmapHost is one <host> element of nmap -oX output. Numbers are read as
// strings so that one bad attribute rejects one host, not the file.
type nmapHost struct {
	StartTime string `xml:"starttime,attr"`
	EndTime   string `xml:"endtime,attr"`
	Status    struct {
		State string `xml:"state,attr"`
	} `xml:"status"`
	Addresses []struct {
		Addr     string `xml:"addr,attr"`
		AddrType string `xml:"addrtype,attr"`
	} `xml:"address"`
	Hostnames []struct {
		Name string `xml:"name,attr"`
		Type string `xml:"type,attr"`
	} `xml:"hostnames>hostname"`
	Ports []struct {
		Protocol string `xml:"protocol,attr"`
		PortID   string `xml:"portid,attr"`
		State    struct {
			State string `xml:"state,attr"`
		} `xml:"state"`
		Service struct {
			Name      string `xml:"name,attr"`
			Product   string `xml:"product,attr"`
			Version   string `xml:"version,attr"`
			ExtraInfo string `xml:"extrainfo,attr"`
			Tunnel    string `xml:"tunnel,attr"`
		} `xml:"service"`
		Scripts []struct {
			ID     string `xml:"id,attr"`
			Output string `xml:"output,attr"`
		} `xml:"script"`
	} `xml:"ports>port"`
}

// ParseNmap parses nmap -oX output, streaming: one <host> element is
// decoded at a time. A host that is down is skipped; otherwise each name
// the user gave (hostname type "user") becomes an observation with the
// host's IP, or the bare IP when there is none; PTR names go to dns.ptr.
// Only ports in state "open" are kept, with service name (https for an SSL
// tunnel), product and version; the banner script's output, or else the
// service's extrainfo, becomes the banner. Other script output is ignored.
//
// XML is not resynchronisable: a file cut off (or broken) mid-host yields
// the complete hosts before the damage and then an *Error with the line
// and byte offset. An error reported by nmap itself (runstats/finished
// errormsg) is returned as an *Error after the hosts.
func ParseNmap(r io.Reader, emit func(host.Host) error) (Stats, error) {
	var st Stats
	d := xml.NewDecoder(r)
	// nmap writes ASCII with character references; any declared charset
	// is read as is.
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	fail := func(line int, off int64, err error) (Stats, error) {
		return st, &Error{Format: string(Nmap), Line: line, Offset: off, Err: err}
	}
	var runStart int64
	sawRun := false
	for {
		off := d.InputOffset()
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			if !sawRun {
				return fail(line, off, errors.New("no <nmaprun> element: not nmap XML output"))
			}
			return st, nil
		}
		if err != nil {
			return fail(line, off, fmt.Errorf("broken XML: %w", err))
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "nmaprun":
			sawRun = true
			runStart, _ = strconv.ParseInt(attr(se, "start"), 10, 64)
		case "host":
			var nh nmapHost
			if err := d.DecodeElement(&nh, &se); err != nil {
				eline, _ := d.InputPos()
				return fail(eline, d.InputOffset(), fmt.Errorf("host starting at line %d (byte %d) is incomplete or broken: %w", line, off, err))
			}
			st.Records++
			hosts, err := nmapHosts(&nh, runStart)
			if errors.Is(err, errSkip) {
				st.skip(line, off, err)
				continue
			}
			if err != nil {
				st.reject(line, off, err.Error())
				continue
			}
			for _, h := range hosts {
				if err := emit(h); err != nil {
					return fail(line, off, err)
				}
				st.Hosts++
			}
		case "finished":
			if msg := attr(se, "errormsg"); msg != "" && (attr(se, "exit") == "error" || attr(se, "exit") == "") {
				return fail(line, off, fmt.Errorf("nmap reported an error: %s", truncate(msg, 200)))
			}
		}
	}
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func nmapHosts(nh *nmapHost, runStart int64) ([]host.Host, error) {
	if nh.Status.State != "" && nh.Status.State != "up" {
		return nil, skip("hosts down")
	}
	var ip string
	for _, a := range nh.Addresses {
		if a.AddrType == "ipv4" || a.AddrType == "ipv6" || (a.AddrType == "" && ip == "") {
			ip = a.Addr
			break
		}
	}
	if ip == "" {
		return nil, errors.New("host has no IP address")
	}
	seen := runStart
	for _, s := range []string{nh.EndTime, nh.StartTime} {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			seen = n
			break
		}
	}
	base, err := newHost("", ip)
	if err != nil {
		return nil, err
	}
	base.FirstSeen, base.LastSeen = seen, seen
	var names []string
	for _, hn := range nh.Hostnames {
		n, err := host.Normalize(hn.Name)
		if err != nil || n.IP {
			continue
		}
		if strings.EqualFold(hn.Type, "PTR") {
			base.DNS.PTR = append(base.DNS.PTR, n.Host)
		} else {
			names = append(names, n.Host)
		}
	}
	for _, p := range nh.Ports {
		if p.State.State != "open" {
			continue
		}
		port, err := strconv.Atoi(p.PortID)
		if err != nil || port <= 0 || port > 65535 {
			return nil, fmt.Errorf("bad portid %q", truncate(p.PortID, 20))
		}
		svc := host.Service{
			Port: port, Protocol: strings.ToLower(p.Protocol), Service: p.Service.Name,
			Product: p.Service.Product, Version: p.Service.Version, Banner: p.Service.ExtraInfo,
			FirstSeen: seen, LastSeen: seen,
		}
		if p.Service.Tunnel == "ssl" && svc.Service == "http" {
			svc.Service = "https"
		}
		for _, s := range p.Scripts {
			if s.ID == "banner" {
				svc.Banner = s.Output
			}
		}
		base.NetworkServices = append(base.NetworkServices, svc)
		if svc.Product != "" {
			base.Products = append(base.Products, svc.Product)
		}
	}
	if len(names) == 0 {
		return []host.Host{base}, nil
	}
	out := make([]host.Host, 0, len(names))
	for _, name := range names {
		h, err := newHost(name, base.IPAddress)
		if err != nil {
			return nil, err
		}
		h.FirstSeen, h.LastSeen = base.FirstSeen, base.LastSeen
		// Each observation gets its own slices: consumers may change them.
		h.DNS.PTR = slices.Clone(base.DNS.PTR)
		h.NetworkServices = slices.Clone(base.NetworkServices)
		h.Products = slices.Clone(base.Products)
		addIP(&h, base.IPAddress)
		out = append(out, h)
	}
	return out, nil
}
