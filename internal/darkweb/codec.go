package darkweb

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// The sealed form of a record is binary, not JSON: a version byte, then
// every sensitive field in a fixed order as a length-prefixed string (the
// lists as a count then their strings). Field names cost nothing, which
// makes a sealed record about a third smaller than its JSON, and decoding
// is a loop of slices instead of reflection (a search page opens up to a
// thousand records).
const codecV1 = 1

// fields returns pointers to the record's string fields in their sealed
// order. Never reorder: append new fields at the end (older blobs simply
// end before them).
func (r *Record) fields() [19]*string {
	return [19]*string{&r.Email, &r.Username, &r.Password, &r.HashType, &r.Salt, &r.Name, &r.Phone, &r.Address,
		&r.IP, &r.VIN, &r.Domain, &r.Hostname, &r.MAC, &r.OrgAlias, &r.BIN, &r.CardLast4, &r.URL, &r.DOB, &r.Country}
}

func (r *Record) appendBinary(b []byte) []byte {
	b = append(b, codecV1)
	for _, f := range r.fields() {
		b = binary.AppendUvarint(b, uint64(len(*f)))
		b = append(b, *f...)
	}
	for _, l := range [][]string{r.HashedPassword, r.CVEs} {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, s := range l {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

var errCodec = errors.New("sealed record is malformed")

func (r *Record) decodeBinary(b []byte) error {
	if len(b) == 0 || b[0] != codecV1 {
		return errCodec
	}
	b = b[1:]
	// The fields are slices of one copy of the plaintext: one allocation
	// a record instead of one a field (a page opens up to 1,000 records).
	all := string(b)
	str := func() (string, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", errCodec
		}
		at := len(all) - len(b) + k
		s := all[at : at+int(n)]
		b = b[k+int(n):]
		if !utf8.ValidString(s) {
			return "", errCodec
		}
		return s, nil
	}
	var err error
	for _, f := range r.fields() {
		if *f, err = str(); err != nil {
			return err
		}
	}
	for _, l := range []*[]string{&r.HashedPassword, &r.CVEs} {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return errCodec
		}
		b = b[k:]
		*l = nil
		for range n {
			s, err := str()
			if err != nil {
				return err
			}
			*l = append(*l, s)
		}
	}
	if len(b) != 0 {
		return errCodec
	}
	return nil
}
