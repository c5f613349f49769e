// Package enrich tells what an IP address is: its AS, organisation and
// location from MMDB files, the cloud provider and region that publish it,
// and the CDN or WAF in front of it, from address ranges and CNAME names.
//
// Everything is loaded once at start into immutable in-memory tables; an
// Enricher does no I/O per lookup and is safe for concurrent use.
package enrich

import (
	"bufio"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"strings"
)

// RangeSource is one provider range file.
type RangeSource struct {
	Format Format
	// Provider names the operator for formats that do not (FormatCIDRList,
	// FormatGeofeed), in lower case.
	Provider string
	// Kind overrides the provider's usual kind for those formats.
	Kind Kind
	// Path is the file to read. Files may be gzip-compressed.
	Path string
}

func (s RangeSource) key() string { return string(s.Format) + "/" + s.Provider }

// Config says which data to load.
type Config struct {
	Geo GeoPaths
	// Ranges replace the embedded default files with the same Format and
	// Provider, and add the others.
	Ranges []RangeSource
	// NoDefaultRanges loads only Ranges, none of the embedded files.
	NoDefaultRanges bool
	// Skipped, if set, receives every range record that was left out.
	Skipped func(source string, s Skipped)
}

//go:embed data/*.gz
var defaultFiles embed.FS

// DefaultRanges lists the embedded provider range files (see
// testdata/README.md for their sources and dates). Their paths are inside
// the embedded file system.
func DefaultRanges() []RangeSource {
	return []RangeSource{
		{Format: FormatAWS, Path: "data/aws-ip-ranges.json.gz"},
		{Format: FormatGoogle, Path: "data/google-cloud-ip-ranges.json.gz"},
		{Format: FormatAzure, Path: "data/microsoft-azure-ip-ranges.json.gz"},
		{Format: FormatOracle, Path: "data/oracle-cloud-ip-ranges.json.gz"},
		{Format: FormatFastly, Path: "data/fastly-ip-ranges.json.gz"},
		{Format: FormatGitHub, Path: "data/github-ip-ranges.json.gz"},
		{Format: FormatZscaler, Path: "data/zscaler-cloud-ip-ranges.json.gz"},
		{Format: FormatCDNCheck, Path: "data/cdncheck_sources_data.json.gz"},
		{Format: FormatCIDRList, Provider: "cloudflare", Path: "data/cloudflare-v4-ip-ranges.txt.gz"},
		{Format: FormatCIDRList, Provider: "cloudflare", Path: "data/cloudflare-v6-ip-ranges.txt.gz"},
		{Format: FormatCIDRList, Provider: "akamai", Path: "data/akamai-v4-ip-ranges.txt.gz"},
		{Format: FormatCIDRList, Provider: "akamai", Path: "data/akamai-v6-ip-ranges.txt.gz"},
		{Format: FormatGeofeed, Provider: "digitalocean", Path: "data/digitalocean.csv.gz"},
		{Format: FormatGeofeed, Provider: "linode", Path: "data/linode.txt.gz"},
	}
}

// LoadRanges reads range files (from fsys when it is non-nil, else from
// the operating system) and returns all their ranges. report, if non-nil,
// receives skipped records.
func LoadRanges(fsys fs.FS, sources []RangeSource, report func(source string, s Skipped)) ([]Range, error) {
	var all []Range
	for _, src := range sources {
		ranges, skipped, err := loadSource(fsys, src)
		if err != nil {
			return nil, err
		}
		if report != nil {
			for _, s := range skipped {
				report(src.Path, s)
			}
		}
		all = append(all, ranges...)
	}
	return all, nil
}

func loadSource(fsys fs.FS, src RangeSource) ([]Range, []Skipped, error) {
	var f io.ReadCloser
	var err error
	if fsys != nil {
		f, err = fsys.Open(src.Path)
	} else {
		f, err = os.Open(src.Path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open %s range file: %w", src.Format, err)
	}
	defer f.Close()
	r, err := maybeGunzip(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s range file %s: %w", src.Format, src.Path, err)
	}
	return Parse(src.Format, src.Path, src.Provider, src.Kind, r)
}

// maybeGunzip decompresses r when it starts with the gzip magic number.
func maybeGunzip(r *bufio.Reader) (io.Reader, error) {
	magic, err := r.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(r)
	}
	return r, nil
}

// Enricher combines the MMDB databases, the provider range table and the
// CNAME patterns. It is safe for concurrent use.
type Enricher struct {
	geo   *GeoDB
	table *Table
}

// New opens the configured MMDB files and builds the range table. Errors
// name the file and the setting that pointed at it.
func New(cfg Config) (*Enricher, error) {
	geo, err := OpenGeoDB(cfg.Geo)
	if err != nil {
		return nil, fmt.Errorf("enrich: %w", err)
	}
	var ranges []Range
	if !cfg.NoDefaultRanges {
		overridden := map[string]bool{}
		for _, s := range cfg.Ranges {
			overridden[s.key()] = true
		}
		defaults := slices.DeleteFunc(DefaultRanges(), func(s RangeSource) bool { return overridden[s.key()] })
		ranges, err = LoadRanges(defaultFiles, defaults, cfg.Skipped)
		if err != nil {
			geo.Close()
			return nil, fmt.Errorf("enrich: embedded ranges: %w", err)
		}
	}
	configured, err := LoadRanges(nil, cfg.Ranges, cfg.Skipped)
	if err != nil {
		geo.Close()
		return nil, fmt.Errorf("enrich: configured ranges: %w", err)
	}
	return &Enricher{geo: geo, table: NewTable(append(ranges, configured...))}, nil
}

// Close releases the MMDB files.
func (e *Enricher) Close() error { return e.geo.Close() }

// Table returns the provider range table.
func (e *Enricher) Table() *Table { return e.table }

// Result is everything known about one address.
type Result struct {
	Geo IPInfo
	// Provider, Region and Service come from the provider range files.
	Provider string
	Region   string
	Service  string
	// CDN names the CDN or WAF in front of the address, from its ranges or
	// from a CNAME pointing at the CDN's edge names.
	CDN          string
	IsCloud      bool
	IsCDN        bool
	IsWAF        bool
	IsCloudflare bool
	// Tags are lower-case and sorted: "cloud", "cdn", "waf" and the
	// provider and CDN names.
	Tags []string
	// Err reports a corrupt MMDB record; the other fields are still set.
	Err error
}

// Enrich describes ip. cnames are the DNS names that resolved to ip (the
// CNAME chain), used to recognise CDNs whose addresses are not published.
func (e *Enricher) Enrich(ip netip.Addr, cnames []string) Result {
	var res Result
	ip = ip.Unmap()
	res.Geo, res.Err = e.geo.Lookup(ip)
	if info, ok := e.table.Lookup(ip); ok {
		res.Provider, res.Region, res.Service = info.Provider, info.Region, info.Service
		res.IsCloud = info.Kind&KindCloud != 0
		res.IsCDN = info.Kind&KindCDN != 0
		res.IsWAF = info.Kind&KindWAF != 0
		if res.IsCDN || res.IsWAF {
			res.CDN = cdnName(info)
		}
	}
	for _, c := range cnames {
		if cdn := CDNForCNAME(c); cdn != "" {
			if res.CDN == "" {
				res.CDN = cdn
			}
			res.IsCDN = true
			break
		}
	}
	res.IsCloudflare = res.Provider == "cloudflare" || res.CDN == "cloudflare"
	res.Tags = tags(res)
	return res
}

// cdnName names the CDN of a CDN range. AWS publishes CloudFront under
// its own provider name; the CDN is better known by the service's.
func cdnName(info Info) string {
	if info.Provider == "aws" && info.Service == "CLOUDFRONT" {
		return "cloudfront"
	}
	if info.Provider == "azure" && info.Service == "AzureFrontDoor" {
		return "azure front door"
	}
	return info.Provider
}

func tags(res Result) []string {
	var t []string
	if res.IsCloud {
		t = append(t, "cloud")
	}
	if res.IsCDN {
		t = append(t, "cdn")
	}
	if res.IsWAF {
		t = append(t, "waf")
	}
	for _, name := range []string{res.Provider, res.CDN} {
		if name != "" {
			t = append(t, strings.ToLower(name))
		}
	}
	slices.Sort(t)
	return slices.Compact(t)
}
