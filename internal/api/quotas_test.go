package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// TestQuotas: organizations, domains and ranges beyond the account's quota
// are a 403 quota_exceeded, also under concurrency; adding an asset the
// organization has is still idempotent at the limit; another account is
// not affected.
func TestQuotas(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AssetChangeLimit = 0 // this test is about quotas
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Quota Co", Enterprise: true,
			Quotas: periscope.Quotas{Organizations: 3, Domains: 2, Ranges: 1}})
		_, other := e.Account(periscope.Account{Company: "Other Co", Enterprise: true})

		// Ten concurrent creations: exactly three succeed.
		var mu sync.Mutex
		codes := map[int]int{}
		var ids []string
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": fmt.Sprintf("org %d", i)})
				mu.Lock()
				defer mu.Unlock()
				codes[r.Status]++
				if r.Status == 201 {
					var o struct{ ID string }
					r.JSON(t, &o)
					ids = append(ids, o.ID)
				} else if r.ErrorCode() != "quota_exceeded" || !strings.Contains(string(r.Body), "3 organizations") {
					t.Errorf("refusal: %d %s", r.Status, r.Body)
				}
			})
		}
		wg.Wait()
		if codes[201] != 3 || codes[403] != 7 {
			t.Fatalf("10 concurrent creations with a quota of 3: %v", codes)
		}
		org := "/api/v1/enterprise/organizations/" + ids[0]
		for _, d := range []string{"quota-a.com", "quota-b.com"} {
			if r := e.Do("POST", org+"/domains", key, map[string]string{"domain": d}); r.Status != 201 {
				t.Fatalf("add %s: %d %s", d, r.Status, r.Body)
			}
		}
		// The quota counts the account's domains over all organizations.
		r := e.Do("POST", "/api/v1/enterprise/organizations/"+ids[1]+"/domains", key, map[string]string{"domain": "quota-c.com"})
		if r.Status != 403 || r.ErrorCode() != "quota_exceeded" {
			t.Fatalf("third domain: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", org+"/domains", key, map[string]string{"domain": "quota-a.com"}); r.Status != 200 {
			t.Fatalf("re-adding a domain at the limit: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", org+"/ip-ranges", key, map[string]string{"ip_range": "8.8.8.0/24"}); r.Status != 201 {
			t.Fatalf("first range: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", org+"/ip-ranges", key, map[string]string{"ip_range": "9.9.9.0/24"}); r.Status != 403 || r.ErrorCode() != "quota_exceeded" {
			t.Fatalf("second range: %d %s", r.Status, r.Body)
		}
		// Removing one makes room again.
		if r := e.Do("DELETE", org+"/domains", key, map[string]string{"domain": "quota-b.com"}); r.Status != 200 {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", org+"/domains", key, map[string]string{"domain": "quota-c.com"}); r.Status != 201 {
			t.Fatalf("after removing one: %d %s", r.Status, r.Body)
		}
		// Another account has the default quota.
		if r := e.Do("POST", "/api/v1/enterprise/organizations", other, map[string]string{"name": "x"}); r.Status != 201 {
			t.Fatalf("other account: %d %s", r.Status, r.Body)
		}
	})
}

// TestDefaultQuotaAndAccountOverride: an account without quotas gets the
// defaults; raising one in the store takes effect on the next request.
func TestDefaultQuotaAndAccountOverride(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AssetChangeLimit, cfg.RateLimit = 0, 0
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		a, key := e.Account(periscope.Account{Company: "Default Co", Enterprise: true})
		n := periscope.DefaultQuotas.Organizations
		for i := range n {
			if r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": fmt.Sprint("o", i)}); r.Status != 201 {
				t.Fatalf("organization %d of the default %d: %d %s", i+1, n, r.Status, r.Body)
			}
		}
		if r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": "one more"}); r.Status != 403 {
			t.Fatalf("beyond the default: %d %s", r.Status, r.Body)
		}
		a.Quotas.Organizations = n + 1
		if err := e.Store.UpdateAccount(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		if r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": "one more"}); r.Status != 201 {
			t.Fatalf("after raising the quota: %d %s", r.Status, r.Body)
		}
	})
}

// TestOrganizationsPaged: the listing stays a bare array, paged by page
// and per_page, with the total and links in headers.
func TestOrganizationsPaged(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AssetChangeLimit = 0
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Paged Co", Enterprise: true})
		for i := range 5 {
			if r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": fmt.Sprint("org ", i)}); r.Status != 201 {
				t.Fatal(r.Status, string(r.Body))
			}
			e.Clock.Advance(1e9) // distinct creation times, so the order is by age
		}
		list := func(q string) (apitest.Response, []string) {
			r := e.Do("GET", "/api/v1/enterprise/organizations"+q, key, nil)
			var os []struct {
				Name      string `json:"name"`
				IsDefault bool   `json:"is_default"`
			}
			if r.Status == 200 {
				r.JSON(t, &os)
			}
			var names []string
			for _, o := range os {
				names = append(names, o.Name)
			}
			return r, names
		}
		r, all := list("")
		if len(all) != 5 || all[0] != "org 0" || r.Header.Get("X-Total-Count") != "5" || r.Header.Get("X-Per-Page") != "100" {
			t.Fatalf("default page: %v %v", all, r.Header)
		}
		r, p2 := list("?per_page=2&page=2")
		if strings.Join(p2, ",") != "org 2,org 3" || r.Header.Get("X-Total-Count") != "5" || r.Header.Get("X-Page") != "2" {
			t.Fatalf("page 2 of 2: %v %v", p2, r.Header)
		}
		link := r.Header.Get("Link")
		for _, want := range []string{`page=3&per_page=2>; rel="next"`, `page=1&per_page=2>; rel="prev"`, `page=3&per_page=2>; rel="last"`} {
			if !strings.Contains(link, want) {
				t.Errorf("Link %q lacks %q", link, want)
			}
		}
		if r, p := list("?per_page=2&page=9"); r.Status != 200 || len(p) != 0 || r.Header.Get("X-Total-Count") != "5" {
			t.Fatalf("past the end: %d %v %s", r.Status, p, r.Body)
		}
		for _, q := range []string{"?page=0", "?per_page=0", "?per_page=1001", "?page=x", "?page=9223372036854775807"} {
			if r, _ := list(q); r.Status != 400 || r.ErrorCode() != "invalid_parameter" {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
		}
	})
}

// TestAssetChangesRateLimited: changes are limited per account, across
// its keys, with Retry-After; reads are not counted.
func TestAssetChangesRateLimited(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AssetChangeLimit = 3
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		a, key := e.Account(periscope.Account{Company: "Churn Co", Enterprise: true})
		users, err := e.Store.Users(t.Context(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		key2, _, err := e.Store.CreateKey(t.Context(), a.ID, users[0].ID, "second")
		if err != nil {
			t.Fatal(err)
		}
		r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": "o"})
		var o struct{ ID string }
		r.JSON(t, &o)
		org := "/api/v1/enterprise/organizations/" + o.ID
		if r := e.Do("POST", org+"/domains", key2, map[string]string{"domain": "churn.com"}); r.Status != 201 {
			t.Fatal(r.Status, string(r.Body))
		}
		if r := e.Do("GET", org, key, nil); r.Status != 200 {
			t.Fatal(r.Status, string(r.Body))
		}
		if r := e.Do("DELETE", org+"/domains", key, map[string]string{"domain": "churn.com"}); r.Status != 200 {
			t.Fatal(r.Status, string(r.Body))
		}
		r = e.Do("POST", org+"/domains", key2, map[string]string{"domain": "churn.com"})
		if r.Status != 429 || r.ErrorCode() != "rate_limited" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("fourth change in a minute: %d %s", r.Status, r.Body)
		}
		e.Clock.Advance(60e9)
		if r := e.Do("POST", org+"/domains", key2, map[string]string{"domain": "churn.com"}); r.Status != 201 {
			t.Fatalf("next minute: %d %s", r.Status, r.Body)
		}
	})
}
