package console

import "net/http"

// Mount registers the console's whole map on the API server. Every page
// but /login and the assets needs a session (signedIn); every POST carries
// the session's CSRF token.
func (c *Console) Mount() {
	h := c.api.HandlePage
	h("GET /assets/{file}", http.HandlerFunc(c.serveAsset))
	h("GET /login", http.HandlerFunc(c.handleLoginPage))
	h("POST /login", http.HandlerFunc(c.handleLogin))
	h("GET /logout", c.signedIn(c.handleLogoutPage))
	h("POST /logout", c.signedIn(c.handleLogout))

	h("GET /{$}", c.signedIn(c.handleOverview))
	h("GET /search", c.signedIn(c.handleSearch))
	h("GET /search/export", c.signedIn(c.handleSearchExport))
	h("GET /search/facets", c.signedIn(c.handleSearchFacets))
	h("GET /hosts/{host}", c.signedIn(c.handleHost))
	h("GET /domains/{domain}", c.signedIn(c.handleDomain))

	h("GET /organizations", c.signedIn(c.handleOrganizations))
	h("POST /organizations", c.signedIn(c.handleCreateOrganization))
	h("GET /organizations/{id}", c.signedIn(c.handleOrganization))
	h("POST /organizations/{id}/delete", c.signedIn(c.handleDeleteOrganization))
	h("POST /organizations/{id}/assets", c.signedIn(c.handleAddAsset))
	h("POST /organizations/{id}/assets/remove", c.signedIn(c.handleRemoveAsset))
	h("POST /organizations/{id}/verify", c.signedIn(c.handleVerifyDomain))

	h("GET /alerts", c.signedIn(c.handleAlerts))
	h("GET /alerts/{id}", c.signedIn(c.handleAlert))
	h("POST /alerts/state", c.signedIn(c.handleAlertState))

	h("GET /vulnerabilities", c.signedIn(c.handleVulnerabilities))
	h("GET /brand", c.signedIn(c.handleBrand))
	h("GET /darkweb", c.signedIn(c.handleDarkweb))
	h("GET /scans", c.signedIn(c.handleScans))
	h("POST /scans", c.signedIn(c.handleStartScan))

	h("GET /settings", c.signedIn(c.handleSettings))
	h("POST /settings/webhooks", c.signedIn(c.handleCreateWebhook))
	h("POST /settings/webhooks/action", c.signedIn(c.handleWebhookAction))
	h("POST /settings/keys", c.signedIn(c.handleCreateKey))
	h("POST /settings/keys/revoke", c.signedIn(c.handleRevokeKey))
}
