package rdap

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/jsontext"
)

// Object is the subset of an RDAP domain (or ip network / autnum) response
// Periscope reads. Unknown members are ignored.
type Object struct {
	ObjectClassName string       `json:"objectClassName"`
	Handle          string       `json:"handle"`
	LDHName         string       `json:"ldhName"`
	UnicodeName     string       `json:"unicodeName"`
	Name            string       `json:"name"`
	Status          []string     `json:"status"`
	Events          []Event      `json:"events"`
	Entities        []Entity     `json:"entities"`
	Nameservers     []Nameserver `json:"nameservers"`
	Links           []Link       `json:"links"`
	SecureDNS       *struct {
		DelegationSigned *bool `json:"delegationSigned"`
	} `json:"secureDNS"`
	// ErrorCode and Title are set in an error answer (RFC 9083 §6);
	// some servers write the code as a string ("400").
	ErrorCode errorCode `json:"errorCode"`
	Title     string    `json:"title"`
}

// errorCode reads an RDAP errorCode written as a number or as a string of
// digits.
type errorCode int

func (c *errorCode) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*c = errorCode(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("errorCode %q is not a number", s)
	}
	*c = errorCode(n)
	return nil
}

// Event is an RDAP event.
type Event struct {
	Action string `json:"eventAction"`
	Date   string `json:"eventDate"`
}

// Link is an RDAP link.
type Link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	Type string `json:"type"`
}

// Nameserver is an RDAP nameserver reference.
type Nameserver struct {
	LDHName string `json:"ldhName"`
}

// Entity is an RDAP entity with its jCard.
type Entity struct {
	Handle     string          `json:"handle"`
	Roles      []string        `json:"roles"`
	VCardArray json.RawMessage `json:"vcardArray"`
	PublicIDs  []struct {
		Type       string `json:"type"`
		Identifier string `json:"identifier"`
	} `json:"publicIds"`
	Entities []Entity `json:"entities"`
}

// Decode reads an RDAP response body. An answer that does not fit the
// model is an error naming the field and what it holds (never the Go
// types of the decoder); an RDAP error answer is an error with its code.
func Decode(b []byte) (*Object, error) {
	var o Object
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("rdap: %w", jsontext.Explain(b, err))
	}
	if o.ErrorCode != 0 {
		return nil, fmt.Errorf("rdap: an error answer (errorCode %d %s), not an object", o.ErrorCode, o.Title)
	}
	if o.ObjectClassName == "" && o.LDHName == "" && o.Handle == "" {
		return nil, fmt.Errorf("rdap: not an RDAP object (no objectClassName, ldhName or handle)")
	}
	return &o, nil
}

// Contact is what a jCard says about an entity.
type Contact struct {
	Handle  string   `json:"handle,omitempty"`
	Roles   []string `json:"roles"`
	Name    string   `json:"name,omitempty"`
	Org     string   `json:"org,omitempty"`
	Email   string   `json:"email,omitempty"`
	Country string   `json:"country,omitempty"`
	IANAID  string   `json:"iana_id,omitempty"`
}

// contact reads fn, org, email and the adr country from a jCard.
func (e Entity) contact() Contact {
	c := Contact{Handle: e.Handle, Roles: e.Roles}
	for _, p := range e.PublicIDs {
		if strings.EqualFold(p.Type, "IANA Registrar ID") {
			c.IANAID = p.Identifier
		}
	}
	var card []json.RawMessage
	if json.Unmarshal(e.VCardArray, &card) != nil || len(card) < 2 {
		return c
	}
	var props [][]json.RawMessage
	if json.Unmarshal(card[1], &props) != nil {
		return c
	}
	for _, p := range props {
		if len(p) < 4 {
			continue
		}
		var name string
		json.Unmarshal(p[0], &name)
		var params map[string]any
		json.Unmarshal(p[1], &params)
		var text string
		json.Unmarshal(p[3], &text)
		switch strings.ToLower(name) {
		case "fn":
			c.Name = text
		case "org":
			if text == "" {
				var parts []string
				json.Unmarshal(p[3], &parts)
				text = strings.Join(parts, " ")
			}
			c.Org = text
		case "email":
			c.Email = text
		case "adr":
			if cc, ok := params["cc"].(string); ok {
				c.Country = strings.ToUpper(cc)
			} else {
				var parts []any
				if json.Unmarshal(p[3], &parts) == nil && len(parts) == 7 {
					if s, ok := parts[6].(string); ok {
						c.Country = s
					}
				}
			}
		}
	}
	for _, f := range []*string{&c.Name, &c.Org, &c.Email, &c.Country} {
		if redacted(*f) {
			*f = ""
		}
	}
	return c
}

func redacted(v string) bool {
	low := strings.ToLower(v)
	return strings.Contains(low, "redacted") || strings.Contains(low, "privacy") || strings.Contains(low, "withheld") || strings.Contains(low, "not disclosed")
}

// Summary is the lookup's view of one RDAP object (the "rdap" object of docs/api.md "WHOIS and RDAP").
type Summary struct {
	Source      string     `json:"source"`
	Registrar   string     `json:"registrar"`
	IANAID      string     `json:"registrar_iana_id,omitempty"`
	Registrant  *Contact   `json:"registrant"`
	Nameservers []string   `json:"nameservers"`
	Status      []string   `json:"status"`
	CreatedAt   time.Time  `json:"-"`
	UpdatedAt   time.Time  `json:"-"`
	ExpiresAt   time.Time  `json:"-"`
	DNSSEC      string     `json:"dnssec,omitempty"`
	Events      []SumEvent `json:"events"`
	Entities    []Contact  `json:"entities"`
}

// SumEvent is an event as the API writes it.
type SumEvent struct {
	Action string `json:"action"`
	Date   string `json:"date"`
}

// Summarize reads what the lookup reports from o; registrar, when not nil,
// is the registrar's own answer (thin registries), whose contacts and dates
// win over the registry's where it gives them.
func Summarize(source string, o, registrar *Object) Summary {
	s := Summary{Source: source, Nameservers: []string{}, Status: []string{}, Events: []SumEvent{}, Entities: []Contact{}}
	objs := []*Object{o}
	if registrar != nil {
		objs = []*Object{registrar, o}
	}
	for _, obj := range objs {
		for _, st := range obj.Status {
			if !slices.Contains(s.Status, st) {
				s.Status = append(s.Status, st)
			}
		}
		for _, ns := range obj.Nameservers {
			n := strings.ToLower(strings.TrimSuffix(ns.LDHName, "."))
			if n != "" && !slices.Contains(s.Nameservers, n) {
				s.Nameservers = append(s.Nameservers, n)
			}
		}
		for _, ev := range obj.Events {
			t, err := time.Parse(time.RFC3339, ev.Date)
			if err != nil {
				continue
			}
			t = t.UTC()
			switch strings.ToLower(ev.Action) {
			case "registration":
				setOnce(&s.CreatedAt, t)
			case "last changed":
				setOnce(&s.UpdatedAt, t)
			case "expiration":
				setOnce(&s.ExpiresAt, t)
			}
			s.Events = append(s.Events, SumEvent{Action: ev.Action, Date: t.Format(time.RFC3339)})
		}
		if s.DNSSEC == "" && obj.SecureDNS != nil && obj.SecureDNS.DelegationSigned != nil {
			s.DNSSEC = map[bool]string{true: "signed", false: "unsigned"}[*obj.SecureDNS.DelegationSigned]
		}
		for _, e := range obj.Entities {
			c := e.contact()
			s.Entities = append(s.Entities, c)
			if slices.Contains(c.Roles, "registrar") && s.Registrar == "" {
				s.Registrar = firstNonEmpty(c.Name, c.Org)
				s.IANAID = c.IANAID
			}
			if slices.Contains(c.Roles, "registrant") && s.Registrant == nil && (c.Handle != "" || c.Org != "" || c.Name != "" || c.Email != "" || c.Country != "") {
				cc := c
				s.Registrant = &cc
			}
		}
	}
	slices.Sort(s.Nameservers)
	return s
}

func setOnce(dst *time.Time, t time.Time) {
	if dst.IsZero() {
		*dst = t
	}
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// RelatedURL returns the registrar's RDAP URL a thin registry points to:
// the first link with rel "related" and type application/rdap+json whose
// href is not the object itself.
func (o *Object) RelatedURL() string {
	self := ""
	for _, l := range o.Links {
		if l.Rel == "self" {
			self = l.Href
		}
	}
	for _, l := range o.Links {
		if l.Rel == "related" && strings.HasPrefix(l.Type, "application/rdap+json") && l.Href != "" && !strings.EqualFold(l.Href, self) {
			return l.Href
		}
	}
	return ""
}
