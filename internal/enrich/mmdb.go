package enrich

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/oschwald/maxminddb-golang/v2"
	"github.com/oschwald/maxminddb-golang/v2/mmdbdata"
)

// IPInfo is what the MMDB databases say about an address.
type IPInfo struct {
	ASN          int
	Organization string // the AS organisation, or the ISP database's organisation
	ISP          string
	CountryCode  string // ISO 3166-1 alpha-2
	CountryName  string // English name
	City         string // English name
	Region       string // first subdivision, English name
	PostalCode   string
	Latitude     float64
	Longitude    float64
}

// merge fills the empty fields of i from o.
func (i *IPInfo) merge(o IPInfo) {
	if i.ASN == 0 {
		i.ASN = o.ASN
	}
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&i.Organization, o.Organization)
	fill(&i.ISP, o.ISP)
	fill(&i.CountryCode, o.CountryCode)
	fill(&i.CountryName, o.CountryName)
	fill(&i.City, o.City)
	fill(&i.Region, o.Region)
	fill(&i.PostalCode, o.PostalCode)
	if i.Latitude == 0 && i.Longitude == 0 {
		i.Latitude, i.Longitude = o.Latitude, o.Longitude
	}
}

// GeoDB answers IPInfo lookups from up to four MMDB files. It is safe for
// concurrent use.
type GeoDB struct {
	readers []*maxminddb.Reader // in precedence order: city, country, ASN, ISP
}

// GeoPaths names the MMDB files to open; empty paths are not used. Each
// file may use the MaxMind GeoIP2/GeoLite2 layout (also used by DB-IP's
// lite databases) or IPinfo's flat layout; the layout is recognised per
// record, so any file can be given in any slot, but the slot decides
// precedence when two files disagree.
type GeoPaths struct {
	CityDB    string
	CountryDB string
	ASNDB     string
	ISPDB     string
}

// OpenGeoDB opens the configured databases. A path that does not exist or
// is not an MMDB file is an error naming the path and the setting.
func OpenGeoDB(paths GeoPaths) (*GeoDB, error) {
	g := &GeoDB{}
	for _, f := range []struct{ setting, path string }{
		{"CityDB", paths.CityDB},
		{"CountryDB", paths.CountryDB},
		{"ASNDB", paths.ASNDB},
		{"ISPDB", paths.ISPDB},
	} {
		if f.path == "" {
			continue
		}
		r, err := openMMDB(f.path)
		if err != nil {
			g.Close()
			return nil, fmt.Errorf("open %s %q: %w", f.setting, f.path, err)
		}
		g.readers = append(g.readers, r)
	}
	return g, nil
}

func openMMDB(path string) (*maxminddb.Reader, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("file does not exist: %w", err)
		}
		return nil, err
	}
	if st.IsDir() {
		return nil, errors.New("is a directory, not an MMDB file")
	}
	r, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("not a readable MMDB file: %w", err)
	}
	return r, nil
}

// Close releases the databases.
func (g *GeoDB) Close() error {
	var errs []error
	for _, r := range g.readers {
		errs = append(errs, r.Close())
	}
	g.readers = nil
	return errors.Join(errs...)
}

// Lookup returns what the databases know about ip. Databases that have no
// record for ip are skipped; a corrupt record is an error, but the fields
// found in the other databases are still returned.
func (g *GeoDB) Lookup(ip netip.Addr) (IPInfo, error) {
	var out IPInfo
	var errs []error
	for _, r := range g.readers {
		res := r.Lookup(ip)
		if !res.Found() {
			if err := res.Err(); err != nil {
				errs = append(errs, fmt.Errorf("look up %s in %s: %w", ip, r.Metadata.DatabaseType, err))
			}
			continue
		}
		var rec mmdbRecord
		if err := res.Decode(&rec); err != nil {
			errs = append(errs, fmt.Errorf("decode %s record for %s: %w", r.Metadata.DatabaseType, ip, err))
			continue
		}
		out.merge(rec.IPInfo)
	}
	return out, errors.Join(errs...)
}

// mmdbRecord decodes a record of either layout. MaxMind nests (country is a
// map with iso_code and names), IPinfo is flat (country is a string, lat
// and lng are strings, asn is "AS15169"), so the record is walked by hand
// and each key is read according to the kind actually stored.
type mmdbRecord struct {
	IPInfo
	countryIsName bool // IPinfo lite: "country" holds the name
}

// UnmarshalMaxMindDB implements mmdbdata.Unmarshaler.
func (rec *mmdbRecord) UnmarshalMaxMindDB(d *mmdbdata.Decoder) error {
	it, _, err := d.ReadMap()
	if err != nil {
		return err
	}
	var registered IPInfo
	for key, err := range it {
		if err != nil {
			return err
		}
		if err := rec.field(d, string(key), &registered); err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
	}
	if rec.CountryCode == "" && rec.CountryName == "" {
		rec.CountryCode, rec.CountryName = registered.CountryCode, registered.CountryName
	}
	return nil
}

func (rec *mmdbRecord) field(d *mmdbdata.Decoder, key string, registered *IPInfo) error {
	var err error
	switch key {
	case "city":
		rec.City, _, err = readPlace(d)
	case "country":
		var name, code string
		name, code, err = readPlace(d)
		if code != "" {
			rec.CountryCode = code
			if name != "" {
				rec.CountryName = name
			}
		} else if isCountryCode(name) && rec.CountryCode == "" {
			rec.CountryCode = name // IPinfo: "country": "US"
		} else if rec.CountryName == "" {
			rec.CountryName = name // IPinfo lite: "country": "United States"
		}
	case "registered_country":
		registered.CountryName, registered.CountryCode, err = readPlace(d)
	case "country_code":
		rec.CountryCode, err = readString(d)
	case "country_name":
		rec.CountryName, err = readString(d)
	case "subdivisions":
		rec.Region, err = readFirstPlace(d)
	case "region":
		rec.Region, _, err = readPlace(d)
	case "postal":
		err = readMap(d, func(k string) error {
			if k != "code" {
				return d.SkipValue()
			}
			rec.PostalCode, err = readString(d)
			return err
		})
	case "postal_code":
		rec.PostalCode, err = readString(d)
	case "location":
		err = readMap(d, func(k string) error {
			switch k {
			case "latitude":
				rec.Latitude, err = readFloat(d)
			case "longitude":
				rec.Longitude, err = readFloat(d)
			default:
				err = d.SkipValue()
			}
			return err
		})
	case "lat", "latitude":
		rec.Latitude, err = readFloat(d)
	case "lng", "longitude":
		rec.Longitude, err = readFloat(d)
	case "autonomous_system_number", "asn":
		rec.ASN, err = readASN(d)
	case "autonomous_system_organization", "as_name":
		rec.Organization, err = readString(d)
	case "name": // IPinfo ASN database
		if rec.Organization == "" {
			rec.Organization, err = readString(d)
		} else {
			err = d.SkipValue()
		}
	case "organization":
		var org string
		org, err = readString(d)
		if rec.Organization == "" {
			rec.Organization = org
		}
	case "isp":
		rec.ISP, err = readString(d)
	case "traits": // Enterprise and City databases nest network data here
		err = readMap(d, func(k string) error { return rec.field(d, k, registered) })
	default:
		err = d.SkipValue()
	}
	return err
}

func isCountryCode(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// readMap calls fn for each key of a map; fn must consume the value.
func readMap(d *mmdbdata.Decoder, fn func(key string) error) error {
	it, _, err := d.ReadMap()
	if err != nil {
		return err
	}
	for key, err := range it {
		if err != nil {
			return err
		}
		if err := fn(string(key)); err != nil {
			return err
		}
	}
	return nil
}

// readString reads a string, or skips a value of any other kind.
func readString(d *mmdbdata.Decoder) (string, error) {
	kind, err := d.PeekKind()
	if err != nil {
		return "", err
	}
	if kind != mmdbdata.KindString {
		return "", d.SkipValue()
	}
	return d.ReadString()
}

// readPlace reads a MaxMind place map ({iso_code, names: {en}}) or a plain
// string (IPinfo), returning the English name and the ISO code.
func readPlace(d *mmdbdata.Decoder) (name, code string, err error) {
	kind, err := d.PeekKind()
	if err != nil {
		return "", "", err
	}
	if kind != mmdbdata.KindMap {
		name, err = readString(d)
		return name, "", err
	}
	err = readMap(d, func(k string) error {
		var err error
		switch k {
		case "iso_code":
			code, err = readString(d)
		case "names":
			err = readMap(d, func(lang string) error {
				var err error
				if lang == "en" {
					name, err = readString(d)
				} else {
					err = d.SkipValue()
				}
				return err
			})
		default:
			err = d.SkipValue()
		}
		return err
	})
	return name, code, err
}

// readFirstPlace reads the English name of the first place in a slice.
func readFirstPlace(d *mmdbdata.Decoder) (string, error) {
	kind, err := d.PeekKind()
	if err != nil {
		return "", err
	}
	if kind != mmdbdata.KindSlice {
		name, _, err := readPlace(d)
		return name, err
	}
	it, _, err := d.ReadSlice()
	if err != nil {
		return "", err
	}
	var first string
	i := 0
	for err := range it {
		if err != nil {
			return "", err
		}
		if i == 0 {
			if first, _, err = readPlace(d); err != nil {
				return "", err
			}
		} else if err := d.SkipValue(); err != nil {
			return "", err
		}
		i++
	}
	return first, nil
}

// readFloat reads a number stored as float or as a decimal string (IPinfo).
func readFloat(d *mmdbdata.Decoder) (float64, error) {
	kind, err := d.PeekKind()
	if err != nil {
		return 0, err
	}
	switch kind {
	case mmdbdata.KindFloat64:
		return d.ReadFloat64()
	case mmdbdata.KindFloat32:
		f, err := d.ReadFloat32()
		return float64(f), err
	case mmdbdata.KindString:
		s, err := d.ReadString()
		if err != nil || s == "" {
			return 0, err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("coordinate %q: %w", s, err)
		}
		return f, nil
	}
	return 0, d.SkipValue()
}

// readASN reads an AS number stored as an integer or as "AS15169".
func readASN(d *mmdbdata.Decoder) (int, error) {
	kind, err := d.PeekKind()
	if err != nil {
		return 0, err
	}
	switch kind {
	case mmdbdata.KindUint16:
		v, err := d.ReadUint16()
		return int(v), err
	case mmdbdata.KindUint32:
		v, err := d.ReadUint32()
		return int(v), err
	case mmdbdata.KindUint64:
		v, err := d.ReadUint64()
		if v > 1<<32-1 {
			return 0, fmt.Errorf("AS number %d out of range", v)
		}
		return int(v), err
	case mmdbdata.KindInt32:
		v, err := d.ReadInt32()
		if v < 0 {
			return 0, fmt.Errorf("negative AS number %d", v)
		}
		return int(v), err
	case mmdbdata.KindString:
		s, err := d.ReadString()
		if err != nil || s == "" {
			return 0, err
		}
		return parseASN(s)
	}
	return 0, d.SkipValue()
}

// parseASN parses "AS15169", "as15169" or "15169".
func parseASN(s string) (int, error) {
	t := s
	if len(t) >= 2 && strings.EqualFold(t[:2], "AS") {
		t = t[2:]
	}
	n, err := strconv.ParseUint(t, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("AS number %q: not a number", s)
	}
	return int(n), nil
}
