package tor_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/tor"
)

func TestParseRecordedLists(t *testing.T) {
	for file, want := range map[string]int{"exit-addresses_2024-03-12.txt": 2372, "torbulkexitlist_2024.txt": 1174} {
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		exits, err := tor.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// The exit-addresses list names one address per node here.
		if len(exits) < want {
			t.Errorf("%s: %d exits, want at least %d", file, len(exits), want)
		}
	}
	exits, _ := tor.Read(strings.NewReader("ExitNode FE39F07EBE7870DCE124AB30DF3ABD0700A43F75\nPublished 2024-03-11 13:07:19\nLastStatus 2024-03-12 08:00:00\nExitAddress 185.241.208.232 2024-03-12 08:10:51\n"))
	if len(exits) != 1 || exits[0].IP.String() != "185.241.208.232" || exits[0].Fingerprint != "FE39F07EBE7870DCE124AB30DF3ABD0700A43F75" ||
		!exits[0].Seen.Equal(time.Date(2024, 3, 12, 8, 10, 51, 0, time.UTC)) || !exits[0].Published.Equal(time.Date(2024, 3, 11, 13, 7, 19, 0, time.UTC)) {
		t.Errorf("first exit: %+v", exits)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{"", "<html><body>Service unavailable</body></html>", "ExitNode\n", "ExitAddress 999.1.1.1 2024-03-12 08:10:51\n",
		"ExitAddress 1.2.3.4 yesterday\n", "1.2.3.4 5.6.7.8\n", "Published 2024\n"} {
		if _, err := tor.Read(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/torbulkexitlist_2024.txt"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:200])
	}
	f.Add([]byte("ExitNode AB\nPublished 2024-03-11 13:07:19\nExitAddress 1.2.3.4 2024-03-12 08:10:51\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tor.Parse(bytes.NewReader(b), func(e tor.Exit) error {
			if !e.IP.IsValid() {
				t.Fatalf("invalid address from %q", b)
			}
			return nil
		})
	})
}
