package enrich

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// Kind classifies what a network range is used for. Kinds combine: a
// Cloudflare edge address is both a CDN and a WAF.
type Kind uint8

// Kinds of provider ranges.
const (
	KindCloud Kind = 1 << iota
	KindCDN
	KindWAF
)

// String returns the kinds joined by "+", for example "cdn+waf".
func (k Kind) String() string {
	var parts []string
	if k&KindCloud != 0 {
		parts = append(parts, "cloud")
	}
	if k&KindCDN != 0 {
		parts = append(parts, "cdn")
	}
	if k&KindWAF != 0 {
		parts = append(parts, "waf")
	}
	return strings.Join(parts, "+")
}

// Info describes the operator of a network range.
type Info struct {
	// Provider is the lower-case operator name, for example "aws" or "cloudflare".
	Provider string
	// Region is the provider's region name (for example "eu-west-1"), or an
	// ISO 3166-2 code for providers that publish geofeeds.
	Region string
	// Service is the provider's service name (for example "EC2"), when published.
	Service string
	Kind    Kind
}

// Range is one published prefix with its operator.
type Range struct {
	Prefix netip.Prefix
	Info   Info
	// Priority breaks ties between identical prefixes from different
	// records: the higher priority wins. Longer prefixes always win over
	// shorter ones regardless of priority.
	Priority int
}

// Format names a provider range file layout.
type Format string

// Supported range file formats.
const (
	FormatAWS      Format = "aws"       // AWS ip-ranges.json
	FormatGoogle   Format = "google"    // Google Cloud cloud.json
	FormatAzure    Format = "azure"     // Azure Service Tags JSON
	FormatOracle   Format = "oracle"    // Oracle Cloud public_ip_ranges.json
	FormatFastly   Format = "fastly"    // Fastly public-ip-list JSON
	FormatGitHub   Format = "github"    // GitHub meta API JSON
	FormatZscaler  Format = "zscaler"   // Zscaler hubPrefixes JSON
	FormatCDNCheck Format = "cdncheck"  // projectdiscovery cdncheck sources_data.json
	FormatCIDRList Format = "cidr-list" // one CIDR per line (Cloudflare ips-v4, Akamai)
	FormatGeofeed  Format = "geofeed"   // RFC 8805 CSV (DigitalOcean, Linode)
)

// Skipped reports one record that a parser left out and why.
type Skipped struct {
	// Pos locates the record: "line 12" for text, "offset 1234" for JSON.
	Pos    string
	Value  string
	Reason string
}

func (s Skipped) String() string {
	return fmt.Sprintf("%s: %q: %s", s.Pos, s.Value, s.Reason)
}

// Priorities of records within and across sources. Vendor files beat the
// cdncheck compilation for an identical prefix, and specific service
// records beat umbrella records (AWS "AMAZON", Azure "AzureCloud").
const (
	priorityCompiled = 0
	priorityUmbrella = 5
	priorityVendor   = 10
)

// providerKinds gives the default kind of providers whose files do not say.
var providerKinds = map[string]Kind{
	"cloudflare":   KindCDN | KindWAF,
	"akamai":       KindCDN,
	"fastly":       KindCDN,
	"incapsula":    KindCDN | KindWAF,
	"aws":          KindCloud,
	"azure":        KindCloud,
	"google":       KindCloud,
	"oracle":       KindCloud,
	"digitalocean": KindCloud,
	"linode":       KindCloud,
}

// Parse reads one range file of the given format. name is used in error
// messages and positions. provider and kind are only used by the formats
// that do not carry a provider name (FormatCIDRList, FormatGeofeed); a zero
// kind means the provider's usual kind. Records that cannot be used are
// returned in skipped; err is set only when the file as a whole cannot be
// read.
func Parse(format Format, name, provider string, kind Kind, r io.Reader) (ranges []Range, skipped []Skipped, err error) {
	p := &parser{name: name}
	switch format {
	case FormatAWS:
		err = p.aws(r)
	case FormatGoogle:
		err = p.google(r)
	case FormatAzure:
		err = p.azure(r)
	case FormatOracle:
		err = p.oracle(r)
	case FormatFastly:
		err = p.fastly(r)
	case FormatGitHub:
		err = p.github(r)
	case FormatZscaler:
		err = p.zscaler(r)
	case FormatCDNCheck:
		err = p.cdncheck(r)
	case FormatCIDRList, FormatGeofeed:
		if provider == "" {
			return nil, nil, fmt.Errorf("parse %s: format %s needs a provider name", name, format)
		}
		if kind == 0 {
			kind = providerKinds[provider]
		}
		err = p.lines(r, format == FormatGeofeed, Info{Provider: provider, Kind: kind})
	default:
		return nil, nil, fmt.Errorf("parse %s: unknown range format %q", name, format)
	}
	if err != nil {
		return nil, p.skipped, fmt.Errorf("parse %s ranges %s: %w", format, name, err)
	}
	return p.ranges, p.skipped, nil
}

type parser struct {
	name    string
	ranges  []Range
	skipped []Skipped
}

// add parses cidr and records it, or records why it was skipped.
func (p *parser) add(pos, cidr string, info Info, priority int) {
	prefix, err := parsePrefix(cidr)
	if err != nil {
		p.skipped = append(p.skipped, Skipped{Pos: pos, Value: cidr, Reason: err.Error()})
		return
	}
	p.ranges = append(p.ranges, Range{Prefix: prefix, Info: info, Priority: priority})
}

func (p *parser) skip(pos, value, reason string) {
	p.skipped = append(p.skipped, Skipped{Pos: pos, Value: value, Reason: reason})
}

// parsePrefix accepts a CIDR or a bare address, masks host bits and maps
// IPv4-mapped IPv6 prefixes back to IPv4.
func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Prefix{}, errors.New("empty prefix")
	}
	var prefix netip.Prefix
	if strings.IndexByte(s, '/') < 0 {
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("invalid prefix: %w", err)
		}
		prefix = netip.PrefixFrom(addr, addr.BitLen())
	} else {
		var err error
		prefix, err = netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("invalid prefix: %w", err)
		}
	}
	if prefix.Addr().Zone() != "" {
		return netip.Prefix{}, errors.New("prefix has a zone")
	}
	if a := prefix.Addr(); a.Is4In6() {
		if prefix.Bits() < 96 {
			return netip.Prefix{}, errors.New("IPv4-mapped prefix shorter than /96")
		}
		prefix = netip.PrefixFrom(a.Unmap(), prefix.Bits()-96)
	}
	return prefix.Masked(), nil
}

// The JSON formats are walked token by token so that large files (Azure is
// over 4 MB) are never held in memory as a whole, and one bad record does
// not stop the rest.

// object calls fn for each key of the JSON object at the decoder's
// position; fn must consume the value (or call skipValue).
func object(dec *json.Decoder, fn func(key string) error) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("offset %d: object key is %T", dec.InputOffset(), tok)
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	_, err := dec.Token() // closing '}'
	return err
}

// array calls fn for each element of the JSON array at the decoder's position.
func array(dec *json.Decoder, fn func() error) error {
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for dec.More() {
		if err := fn(); err != nil {
			return err
		}
	}
	_, err := dec.Token() // closing ']'
	return err
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("offset %d: expected %q, found %v", dec.InputOffset(), want, tok)
	}
	return nil
}

func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// element decodes one array element into v. A record of the wrong shape is
// reported as skipped rather than failing the file; syntax errors still fail.
func (p *parser) element(dec *json.Decoder, v any) (pos string, ok bool, err error) {
	pos = fmt.Sprintf("offset %d", dec.InputOffset())
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return pos, false, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		p.skip(pos, truncate(string(raw)), fmt.Sprintf("bad record: %v", err))
		return pos, false, nil
	}
	return pos, true, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func newDecoder(r io.Reader) *json.Decoder {
	return json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
}

func (p *parser) aws(r io.Reader) error {
	dec := newDecoder(r)
	seen := false
	err := object(dec, func(key string) error {
		if key != "prefixes" && key != "ipv6_prefixes" {
			return skipValue(dec)
		}
		seen = true
		return array(dec, func() error {
			var rec struct {
				IPPrefix   string `json:"ip_prefix"`
				IPv6Prefix string `json:"ipv6_prefix"`
				Region     string `json:"region"`
				Service    string `json:"service"`
			}
			pos, ok, err := p.element(dec, &rec)
			if !ok {
				return err
			}
			info := Info{Provider: "aws", Region: rec.Region, Service: rec.Service, Kind: KindCloud}
			if rec.Region == "GLOBAL" {
				info.Region = ""
			}
			priority := priorityVendor
			switch rec.Service {
			case "AMAZON":
				priority = priorityUmbrella
			case "CLOUDFRONT":
				info.Kind = KindCloud | KindCDN
			}
			p.add(pos, rec.IPPrefix+rec.IPv6Prefix, info, priority)
			return nil
		})
	})
	if err == nil && !seen {
		err = errors.New(`no "prefixes" array`)
	}
	return err
}

func (p *parser) google(r io.Reader) error {
	dec := newDecoder(r)
	seen := false
	err := object(dec, func(key string) error {
		if key != "prefixes" {
			return skipValue(dec)
		}
		seen = true
		return array(dec, func() error {
			var rec struct {
				IPv4Prefix string `json:"ipv4Prefix"`
				IPv6Prefix string `json:"ipv6Prefix"`
				Service    string `json:"service"`
				Scope      string `json:"scope"`
			}
			pos, ok, err := p.element(dec, &rec)
			if !ok {
				return err
			}
			info := Info{Provider: "google", Region: rec.Scope, Service: rec.Service, Kind: KindCloud}
			if rec.Scope == "global" {
				info.Region = ""
			}
			p.add(pos, rec.IPv4Prefix+rec.IPv6Prefix, info, priorityVendor)
			return nil
		})
	})
	if err == nil && !seen {
		err = errors.New(`no "prefixes" array`)
	}
	return err
}

func (p *parser) azure(r io.Reader) error {
	dec := newDecoder(r)
	seen := false
	err := object(dec, func(key string) error {
		if key != "values" {
			return skipValue(dec)
		}
		seen = true
		return array(dec, func() error {
			var rec struct {
				Name       string `json:"name"`
				Properties struct {
					Region          string   `json:"region"`
					SystemService   string   `json:"systemService"`
					AddressPrefixes []string `json:"addressPrefixes"`
				} `json:"properties"`
			}
			pos, ok, err := p.element(dec, &rec)
			if !ok {
				return err
			}
			service := rec.Properties.SystemService
			if service == "" {
				// AzureCloud.<region> and AzureFrontDoor.* carry the
				// service only in the tag name.
				service, _, _ = strings.Cut(rec.Name, ".")
			}
			info := Info{Provider: "azure", Region: rec.Properties.Region, Service: service, Kind: KindCloud}
			priority := priorityVendor
			switch {
			case service == "AzureCloud":
				priority = priorityUmbrella
			case rec.Name == "AzureFrontDoor.Frontend":
				info.Kind = KindCloud | KindCDN
			}
			for i, cidr := range rec.Properties.AddressPrefixes {
				p.add(fmt.Sprintf("%s %s[%d]", pos, rec.Name, i), cidr, info, priority)
			}
			return nil
		})
	})
	if err == nil && !seen {
		err = errors.New(`no "values" array`)
	}
	return err
}

func (p *parser) oracle(r io.Reader) error {
	dec := newDecoder(r)
	seen := false
	err := object(dec, func(key string) error {
		if key != "regions" {
			return skipValue(dec)
		}
		seen = true
		return array(dec, func() error {
			var rec struct {
				Region string `json:"region"`
				CIDRs  []struct {
					CIDR string   `json:"cidr"`
					Tags []string `json:"tags"`
				} `json:"cidrs"`
			}
			pos, ok, err := p.element(dec, &rec)
			if !ok {
				return err
			}
			for i, c := range rec.CIDRs {
				info := Info{Provider: "oracle", Region: rec.Region, Service: strings.Join(c.Tags, ","), Kind: KindCloud}
				p.add(fmt.Sprintf("%s %s[%d]", pos, rec.Region, i), c.CIDR, info, priorityVendor)
			}
			return nil
		})
	})
	if err == nil && !seen {
		err = errors.New(`no "regions" array`)
	}
	return err
}

// stringLists walks a top-level object and adds every string of the arrays
// whose key accept returns true for; other values are skipped.
func (p *parser) stringLists(r io.Reader, accept func(key string) (Info, bool)) (int, error) {
	dec := newDecoder(r)
	lists := 0
	err := object(dec, func(key string) error {
		info, ok := accept(key)
		if !ok {
			return skipValue(dec)
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, isDelim := tok.(json.Delim); !isDelim || d != '[' {
			if isDelim { // an object or array we cannot use: consume it
				if err := skipRest(dec); err != nil {
					return err
				}
			}
			p.skip(fmt.Sprintf("offset %d", dec.InputOffset()), key, "not an array of prefixes")
			return nil
		}
		lists++
		for dec.More() {
			pos := fmt.Sprintf("offset %d %s", dec.InputOffset(), key)
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			switch v := tok.(type) {
			case string:
				p.add(pos, v, info, priorityVendor)
			case json.Delim:
				if err := skipRest(dec); err != nil {
					return err
				}
				p.skip(pos, string(v), "not a string")
			default:
				p.skip(pos, fmt.Sprint(v), "not a string")
			}
		}
		_, err = dec.Token()
		return err
	})
	return lists, err
}

// skipRest consumes the rest of an object or array whose opening delimiter
// has already been read.
func skipRest(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
	}
	return nil
}

func (p *parser) fastly(r io.Reader) error {
	info := Info{Provider: "fastly", Kind: KindCDN}
	n, err := p.stringLists(r, func(key string) (Info, bool) {
		return info, key == "addresses" || key == "ipv6_addresses"
	})
	if err == nil && n == 0 {
		err = errors.New(`no "addresses" array`)
	}
	return err
}

func (p *parser) zscaler(r io.Reader) error {
	info := Info{Provider: "zscaler", Kind: KindCloud}
	n, err := p.stringLists(r, func(key string) (Info, bool) {
		return info, key == "hubPrefixes"
	})
	if err == nil && n == 0 {
		err = errors.New(`no "hubPrefixes" array`)
	}
	return err
}

// githubSkip lists meta API keys that hold no address ranges, and the
// Actions and Codespaces lists, which are whole Azure regions rather than
// GitHub's own networks: the Azure file describes them better.
var githubSkip = map[string]bool{
	"actions":                            true,
	"codespaces":                         true,
	"verifiable_password_authentication": true,
	"ssh_key_fingerprints":               true,
	"ssh_keys":                           true,
	"domains":                            true,
}

func (p *parser) github(r io.Reader) error {
	n, err := p.stringLists(r, func(key string) (Info, bool) {
		if githubSkip[key] {
			return Info{}, false
		}
		return Info{Provider: "github", Service: key}, true
	})
	if err == nil && n == 0 {
		err = errors.New("no address lists")
	}
	return err
}

// cdncheckKinds maps the top-level sections of sources_data.json.
var cdncheckKinds = map[string]Kind{"cdn": KindCDN, "waf": KindWAF, "cloud": KindCloud}

func (p *parser) cdncheck(r io.Reader) error {
	dec := newDecoder(r)
	sections := 0
	err := object(dec, func(section string) error {
		kind, ok := cdncheckKinds[section]
		if !ok {
			// "common" maps CNAME suffixes, not addresses.
			return skipValue(dec)
		}
		sections++
		return object(dec, func(provider string) error {
			var cidrs []string
			pos := fmt.Sprintf("offset %d %s.%s", dec.InputOffset(), section, provider)
			if err := dec.Decode(&cidrs); err != nil {
				var typeErr *json.UnmarshalTypeError
				if errors.As(err, &typeErr) {
					p.skip(pos, provider, "not an array of prefixes")
					return nil
				}
				return err
			}
			info := Info{Provider: cdncheckProvider(provider), Kind: kind}
			for _, c := range cidrs {
				p.add(pos, c, info, priorityCompiled)
			}
			return nil
		})
	})
	if err == nil && sections == 0 {
		err = errors.New(`no "cdn", "waf" or "cloud" section`)
	}
	return err
}

// cdncheckProvider maps cdncheck's names onto ours where they differ.
func cdncheckProvider(name string) string {
	switch name = strings.ToLower(name); name {
	case "cloudfront":
		// Kept as the CDN's own name; the AWS file supplies the provider
		// for identical prefixes.
		return "cloudfront"
	case "amazon":
		return "aws"
	}
	return name
}

// lines parses one-CIDR-per-line text and RFC 8805 geofeed CSV
// (prefix,country,region,city,postal). Blank lines and '#' comments are ignored.
func (p *parser) lines(r io.Reader, geofeed bool, base Info) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		pos := fmt.Sprintf("line %d", n)
		info := base
		cidr := string(line)
		if geofeed {
			fields := strings.Split(cidr, ",")
			cidr = fields[0]
			if len(fields) > 2 {
				info.Region = strings.TrimSpace(fields[2])
			}
		}
		p.add(pos, cidr, info, priorityVendor)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return nil
}
