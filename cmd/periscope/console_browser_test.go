package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// The web console in a real browser: Debian's chromium driven through the
// DevTools protocol (chromedp) against serve --demo. .ci/run installs
// chromium; without it the test skips, except in CI (CI set), where it
// fails.

// screenshotsDir is where TestConsoleInBrowser writes its screenshots when
// PERISCOPE_SCREENSHOTS is set (docs/console.md shows them); otherwise
// they go to a temporary directory.
const screenshotsDir = "../../docs/screenshots"

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (CI is set: .ci/run installs it with apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); the console's browser tests need it")
	return ""
}

// browser is one headless chromium with a fresh profile, its messages
// about refused content (CSP violations) collected.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	issues []string
}

func newBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1440, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 10*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &browser{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		var text string
		switch e := ev.(type) {
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError && e.Entry.Source != log.SourceNetwork {
				text = e.Entry.Text
			}
		case *runtime.EventExceptionThrown:
			text = e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				text += " " + e.ExceptionDetails.Exception.Description
			}
		}
		if text != "" {
			b.mu.Lock()
			b.issues = append(b.issues, text)
			b.mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx, log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// run runs one step, bounded so that a step that hangs fails with the
// page's HTML in the log.
func (b *browser) run(t *testing.T, what string, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var html, loc string
		chromedp.Run(b.ctx, chromedp.Location(&loc), chromedp.OuterHTML("main", &html, chromedp.ByQuery))
		t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, html)
	}
}

// takeIssues returns and clears the errors the page logged.
func (b *browser) takeIssues() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.issues
	b.issues = nil
	return out
}

// open loads a page and returns its h1 and location.
func (b *browser) open(t *testing.T, url string) (h1, location string) {
	t.Helper()
	b.run(t, "open "+url, chromedp.Navigate(url), chromedp.WaitVisible("main h1", chromedp.ByQuery),
		chromedp.Text("main h1", &h1, chromedp.ByQuery), chromedp.Location(&location))
	return h1, location
}

func (b *browser) shot(t *testing.T, dir, name string) {
	t.Helper()
	var buf []byte
	b.run(t, "screenshot "+name, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		buf, err = page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatJpeg).WithQuality(70).Do(ctx)
		return err
	}))
	if err := os.WriteFile(filepath.Join(dir, name+".jpg"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// signIn signs in from the page a signed-out request was sent to, with
// the keyboard alone (type the key, Enter).
func (b *browser) signIn(t *testing.T, base, path, key string) string {
	t.Helper()
	var loc string
	b.run(t, "sign in", chromedp.Navigate(base+path), chromedp.WaitVisible("#key", chromedp.ByID), chromedp.Location(&loc))
	if want := base + "/login?next="; path == "/" && loc != base+"/login" || path != "/" && !strings.HasPrefix(loc, want) {
		t.Fatalf("signed-out %s went to %s, want /login?next=...", path, loc)
	}
	b.run(t, "type the key", chromedp.SendKeys("#key", key+"\r", chromedp.ByID), chromedp.WaitVisible("nav.top ul", chromedp.ByQuery),
		chromedp.Location(&loc))
	return loc
}

func TestConsoleInBrowser(t *testing.T) {
	exe := chromium(t)
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			if os.Getenv("PERISCOPE_SCREENSHOTS") != "" && engine == "sqlite" {
				dir = screenshotsDir
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			consoleInBrowser(t, exe, engine, dir)
		})
	}
}

func consoleInBrowser(t *testing.T, exe, engine, shots string) {
	// No per-key limit: waiting for the demo alerts polls with the key.
	s := startServer(t, storetest.DSN(t, engine), "--demo", "--alert-baseline", "1s", "--alert-feed-interval", "1s", "--rate-limit", "0")
	keys := demoKeys(t, s.stdout.String())
	alerts := waitDemoAlerts(t, s, keys["enterprise"])
	status, body := s.do(t, "GET", "/api/v1/enterprise/organizations", keys["enterprise"], "")
	var orgs []struct{ ID string }
	if err := json.Unmarshal(body, &orgs); err != nil || status != 200 || len(orgs) == 0 {
		t.Fatalf("organizations: %d %s", status, body)
	}
	alertID := alerts[0].ID
	b := newBrowser(t, exe)

	if loc := b.signIn(t, s.base, "/alerts", keys["enterprise"]); loc != s.base+"/alerts" {
		t.Fatalf("after sign-in: %s, want back at /alerts", loc)
	}
	pages := []struct{ name, path, h1 string }{
		{"overview", "/", "Overview"},
		{"search", "/search?q=domain:megacorp.com", "Search"},
		{"host", "/hosts/scanme.nmap.org", "scanme.nmap.org"},
		{"domain", "/domains/megacorp.com", "megacorp.com"},
		{"organizations", "/organizations", "Organizations"},
		{"organization", "/organizations/" + orgs[0].ID, ""},
		{"alerts", "/alerts", "Alerts"},
		{"alert", "/alerts/" + alertID, ""},
		{"vulnerabilities", "/vulnerabilities?q=log4j", "Vulnerabilities"},
		{"brand", "/brand", "Brand protection"},
		{"darkweb", "/darkweb", "Dark web"},
		{"scans", "/scans", "Scans"},
		{"settings", "/settings", "Settings"},
		{"logout", "/logout", "Sign out"},
	}
	for _, p := range pages {
		h1, loc := b.open(t, s.base+p.path)
		if loc != s.base+p.path || (p.h1 != "" && h1 != p.h1) || h1 == "Not Found" || h1 == "Internal Server Error" {
			t.Errorf("%s: at %s with heading %q, want %q", p.path, loc, h1, p.h1)
		}
		if issues := b.takeIssues(); len(issues) > 0 {
			t.Errorf("%s: the page logged errors (CSP violations, script errors): %q", p.path, issues)
		}
		b.shot(t, shots, p.name)
	}

	var loc string
	// The overview's chart is drawn by uPlot under the strict CSP.
	var canvases int
	b.run(t, "chart", chromedp.Navigate(s.base+"/"), chromedp.WaitVisible("#alerts-chart canvas", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#alerts-chart canvas").length`, &canvases))
	if canvases == 0 {
		t.Errorf("the overview chart was not drawn")
	}
	// The keyboard: the first Tab reaches the skip link, Enter follows it.
	var focused string
	b.run(t, "keyboard", chromedp.KeyEvent("\t"), chromedp.Evaluate(`document.activeElement.textContent`, &focused),
		chromedp.KeyEvent("\r"), chromedp.Location(&loc))
	if focused != "Skip to content" || !strings.HasSuffix(loc, "#main") {
		t.Errorf("first Tab focuses %q; Enter went to %s", focused, loc)
	}

	// htmx loads the search's facets beside the results; a facet value's
	// link adds it to the query.
	var facetLinks int
	b.run(t, "facets", chromedp.Navigate(s.base+"/search?q=domain:megacorp.com"), chromedp.WaitVisible("aside .facet-list a", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("aside .facet-list a").length`, &facetLinks),
		chromedp.Click("aside .facet-list a", chromedp.ByQuery), chromedp.WaitVisible("main h1", chromedp.ByQuery), chromedp.Location(&loc))
	if facetLinks == 0 || !strings.Contains(loc, "q=domain%3Amegacorp.com+") {
		t.Errorf("facets: %d links; after clicking one at %s", facetLinks, loc)
	}
	b.shot(t, shots, "search")

	// 360 px wide: the pages reflow (wide tables scroll in their own box).
	b.run(t, "narrow", chromedp.EmulateViewport(360, 780))
	for _, p := range []string{"/", "/alerts", "/organizations/" + orgs[0].ID, "/settings"} {
		b.open(t, s.base+p)
		var overflow bool
		b.run(t, "measure "+p, chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow))
		if overflow {
			t.Errorf("%s is wider than a 360 px screen", p)
		}
	}
	b.shot(t, shots, "settings-360")
	b.run(t, "wide", chromedp.EmulateViewport(1440, 900))

	// One action a page: create an organization...
	var flash string
	b.open(t, s.base+"/organizations")
	b.run(t, "create organization", chromedp.SendKeys("#org-name", "Red team", chromedp.ByID),
		chromedp.Click(`form[action="/organizations"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible("p.flash, p.notice", chromedp.ByQuery), chromedp.Text("p.flash, p.notice", &flash, chromedp.ByQuery), chromedp.Location(&loc))
	if flash != "Organization created." || !strings.HasPrefix(loc, s.base+"/organizations/") {
		t.Errorf("create organization: at %s, message %q", loc, flash)
	}
	// The organization page names the exact TXT record that verifies a
	// domain.
	var txt string
	b.open(t, s.base+"/organizations/"+orgs[0].ID)
	b.run(t, "txt record", chromedp.Text("#txt-record", &txt, chromedp.ByID))
	if !regexp.MustCompile(`^periscope-verification=[0-9a-f]{16,}$`).MatchString(txt) {
		t.Errorf("TXT record shown: %q", txt)
	}
	// ... acknowledge an alert ...
	var state string
	b.open(t, s.base+"/alerts/"+alertID)
	b.run(t, "acknowledge", chromedp.Click(`button[value=acknowledge]`, chromedp.ByQuery),
		chromedp.WaitVisible("p.flash", chromedp.ByQuery),
		chromedp.Text(`//dt[.="State"]/following-sibling::dd[1]`, &state, chromedp.BySearch))
	if state != "acknowledged" {
		t.Errorf("after acknowledging, the alert's state is %q", state)
	}
	// ... create a webhook (its secret shown once).
	var secret string
	b.open(t, s.base+"/settings")
	b.run(t, "create webhook", chromedp.SendKeys("#wh-url", "https://hooks.example.com/periscope", chromedp.ByID),
		chromedp.Click(`form[action="/settings/webhooks"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible("#new-secret", chromedp.ByID), chromedp.Text("#new-secret", &secret, chromedp.ByID))
	if len(secret) < 16 {
		t.Errorf("webhook secret %q", secret)
	}
	if issues := b.takeIssues(); len(issues) > 0 {
		t.Errorf("the actions logged errors: %q", issues)
	}

	// Sign out; the pages are closed again.
	b.run(t, "sign out", chromedp.Click(`nav.top form[action="/logout"] button`, chromedp.ByQuery),
		chromedp.WaitVisible("#key", chromedp.ByID), chromedp.Location(&loc))
	if loc != s.base+"/login" {
		t.Errorf("after sign-out at %s", loc)
	}
	if _, loc := b.open(t, s.base+"/alerts"); !strings.HasPrefix(loc, s.base+"/login") {
		t.Errorf("after sign-out /alerts is at %s", loc)
	}

	// Another account opening the first account's alert gets the 404 page.
	other := newBrowser(t, exe)
	other.signIn(t, s.base, "/", keys["oem"])
	h1, _ := other.open(t, s.base+"/alerts/"+alertID)
	var text string
	other.run(t, "read", chromedp.Text("main", &text, chromedp.ByQuery))
	if h1 != "Not found" || strings.Contains(text, alerts[0].Title) {
		t.Errorf("the OEM account opening the enterprise account's alert: heading %q", h1)
	}
	other.shot(t, shots, "not-found")
}
