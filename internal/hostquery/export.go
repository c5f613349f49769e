package hostquery

import (
	"bufio"
	"context"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// ExportFormats are the formats of an export (GET /hosts/export,
// `periscope search --export`) and their content types.
var ExportFormats = map[string]string{
	"ndjson": "application/x-ndjson",
	"csv":    "text/csv; charset=utf-8",
	"ips":    "text/plain; charset=utf-8",
}

// CSVHeader is the header row of a CSV export.
var CSVHeader = []string{"host", "ip_address", "domain", "country_code", "asn", "organization", "ports",
	"products", "tech", "tags", "http_status_code", "http_title", "cloud_provider", "cdn", "first_seen", "last_seen"}

// CheckFormat returns an invalid_parameter error for an unknown format.
func CheckFormat(format string) error {
	if _, ok := ExportFormats[format]; !ok {
		return periscope.Errorf(periscope.EInvalid, "format must be ndjson, csv or ips (got %q).", periscope.Clip(format, 32))
	}
	return nil
}

// Export writes every match to w in format, in id order, a chunk of hosts
// at a time (memory stays flat however many match): ndjson is one host
// object (as /host/{host} documents it) a line; csv is CSVHeader's
// columns, lists joined with spaces; ips is the address of each match that
// has one, a line each. It returns how many hosts it wrote.
func Export(ctx context.Context, w io.Writer, m *hoststore.Matches, format string) (int, error) {
	if err := CheckFormat(format); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	n := 0
	var cw *csv.Writer
	var write func(*host.Host) error
	switch format {
	case "csv":
		cw = csv.NewWriter(bw)
		if err := cw.Write(CSVHeader); err != nil {
			return 0, err
		}
		write = func(x *host.Host) error { return cw.Write(csvRow(x)) }
	case "ips":
		write = func(x *host.Host) error {
			if x.IPAddress == "" {
				return nil
			}
			bw.WriteString(x.IPAddress)
			return bw.WriteByte('\n')
		}
	}
	var err error
	if format == "ndjson" {
		// The stored documents are the canonical JSON: no decoding.
		err = m.EachJSON(ctx, func(js []byte) error {
			n++
			if _, err := bw.Write(js); err != nil {
				return err
			}
			return bw.WriteByte('\n')
		})
	} else {
		err = m.Each(ctx, func(x *host.Host) error {
			n++
			return write(x)
		})
	}
	if err != nil {
		return n, err
	}
	if cw != nil {
		// The CSV writer's buffer first, then ours.
		if cw.Flush(); cw.Error() != nil {
			return n, cw.Error()
		}
	}
	return n, bw.Flush()
}

// csvRow is one host as exportCSVHeader's columns; lists are joined with
// spaces.
func csvRow(h *host.Host) []string {
	ports := make([]string, len(h.NetworkPorts))
	for i, p := range h.NetworkPorts {
		ports[i] = strconv.Itoa(p)
	}
	status := ""
	if h.HTTPStatusCode > 0 {
		status = strconv.Itoa(h.HTTPStatusCode)
	}
	asn := ""
	if h.IPMetadata.ASN > 0 {
		asn = strconv.Itoa(h.IPMetadata.ASN)
	}
	return []string{h.Host, h.IPAddress, h.Domain, csvText(h.IPMetadata.CountryCode), asn, csvText(h.IPMetadata.Organization),
		strings.Join(ports, " "), csvText(strings.Join(products(h), " ")), csvText(strings.Join(h.Web, " ")),
		csvText(strings.Join(h.Tags, " ")), status, csvText(h.HTTPTitle), csvText(h.Cloud.Provider), csvText(h.CDN),
		strconv.FormatInt(h.FirstSeen, 10), strconv.FormatInt(h.LastSeen, 10)}
}

// csvText keeps a cell from being read as a formula by a spreadsheet.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// products returns the host's products and its services' products, each
// once: the values product: matches.
func products(h *host.Host) []string {
	out := slices.Clone(h.Products)
	for _, sv := range h.NetworkServices {
		if sv.Product != "" && !slices.Contains(out, sv.Product) {
			out = append(out, sv.Product)
		}
	}
	return out
}
