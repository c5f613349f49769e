package ingestreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestSummaryText(t *testing.T) {
	s := Summary{Kind: "nmap", Sources: 2, Read: 1000, Inserted: 400, Updated: 80, Unchanged: 6, Duration: 2 * time.Second}
	s.Skip("hosts down", 498)
	s.Skip("private addresses", 8)
	s.Reject("a.xml:17: bad IP address")
	var b bytes.Buffer
	s.WriteText(&b)
	want := "nmap: 2 source(s): read 1000, stored 480 (inserted 400, updated 80), unchanged 6, skipped 506, rejected 1 in 2s (500 records/s)\n" +
		"  skipped 506: 498 hosts down, 8 private addresses\n" +
		"  rejected a.xml:17: bad IP address\n"
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["stored"] != 480.0 || got["seconds"] != 2.0 || got["records_per_second"] != 500.0 || got["skipped"] != 506.0 ||
		got["skipped_by"].(map[string]any)["private addresses"] != 8.0 || len(got["rejects"].([]any)) != 1 {
		t.Errorf("json %s", b.String())
	}
	// Empty lists and maps are [] and {}, never null.
	b.Reset()
	Summary{Kind: "kev"}.WriteJSON(&b)
	if !strings.Contains(b.String(), `"skipped_by":{}`) || !strings.Contains(b.String(), `"rejects":[]`) {
		t.Errorf("empty summary %s", b.String())
	}
}

func TestRejectsBounded(t *testing.T) {
	var s Summary
	for range MaxRejects + 5 {
		s.Reject("x")
	}
	s.AddRejects(3, []string{"y"})
	if s.Rejected != MaxRejects+8 || len(s.Rejects) != MaxRejects {
		t.Errorf("rejected %d, listed %d", s.Rejected, len(s.Rejects))
	}
	var b bytes.Buffer
	s.WriteText(&b)
	if !strings.Contains(b.String(), "... and 8 more rejected") {
		t.Errorf("text %s", b.String())
	}
}
