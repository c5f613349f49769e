package api

// registerRoutes is the whole API map. Policies (route.go) decide
// authentication, entitlement, credits and rate-limit family.
func (s *Server) registerRoutes() {
	// Operations and documentation: no key.
	s.handle("GET /healthz", public, s.handleHealthz)
	s.handle("GET /readyz", public, s.handleReadyz)
	s.handle("GET /metrics", public, s.handleMetrics)
	s.handle("GET /api/v1/openapi.json", public, s.handleOpenAPI)
	s.handle("GET /docs", public, s.handleDocs)

	// Account (§4.1).
	s.handle("GET /api/v1/auth/status", free, s.handleAuthStatus)

	// Enterprise organizations and assets (§4.2).
	s.handle("POST /api/v1/enterprise/organizations", enterprise, s.handleCreateOrganization)
	s.handle("GET /api/v1/enterprise/organizations", enterprise, s.handleListOrganizations)
	s.handle("GET /api/v1/enterprise/organizations/{org_id}", enterprise, s.handleGetOrganization)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}", enterprise, s.handleDeleteOrganization)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/domains", enterprise, s.handleAddDomain)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}/domains", enterprise, s.handleRemoveDomain)
	s.handle("POST /api/v1/enterprise/organizations/{org_id}/ip-ranges", enterprise, s.handleAddIPRange)
	s.handle("DELETE /api/v1/enterprise/organizations/{org_id}/ip-ranges", enterprise, s.handleRemoveIPRange)

	// OEM account (§4.7).
	s.handle("POST /api/v1/oem/account/audit-logs", oemAuditLimit, s.handleAuditLogs)
	s.handle("POST /api/v1/oem/account/credits", oemFree, s.handleOEMCredits)

	// Capabilities register below, one line per route.
	// <routes:vuln>
	s.registerVulnMetrics()
	s.handle("GET /api/v1/vulnerability-intelligence/feed", charged, s.handleVulnFeed)
	s.handle("GET /api/v1/vulnerability-intelligence/vulnerability-search", charged, s.handleVulnSearch)
	s.handle("POST /api/v1/vulnerability-intelligence/vulnerability-search", chargedForms, s.handleVulnSearch)
	s.handle("GET /api/v1/vulnerability-intelligence/advisories-search", charged, s.handleAdvisorySearch)
	s.handle("POST /api/v1/vulnerability-intelligence/advisories-search", chargedForms, s.handleAdvisorySearch)
	s.handle("GET /api/v1/vulnerability-intelligence/exploits-search", charged, s.handleExploitSearch)
	s.handle("POST /api/v1/vulnerability-intelligence/exploits-search", chargedForms, s.handleExploitSearch)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/feed", oemCharged, s.handleOEMVulnFeed)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/vulnerability-search", oemCharged, s.handleVulnSearch)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/advisories-search", oemCharged, s.handleAdvisorySearch)
	s.handle("POST /api/v1/oem/vulnerability-intelligence/exploits-search", oemCharged, s.handleExploitSearch)
	// <routes:hosts>
	s.handle("POST /api/v1/global/search", charged, s.handleGlobalSearch)
	s.handle("GET /api/v1/domain/{domain}/subdomains", charged, s.handleSubdomains)
	s.handle("GET /api/v1/domain/{domain}/details", charged, s.handleDomainDetails)
	s.handle("GET /api/v1/host/{host}", charged, s.handleHost)
	s.handle("POST /api/v1/oem/attack-surface/search", oemCharged, s.handleAttackSurfaceSearch)
	s.handle("POST /api/v1/oem/attack-surface/host", oemCharged, s.handleAttackSurfaceHost)
	// <routes:fidelity> FullHunt's routes over data we hold (intel.go, nexus.go, entities.go).
	s.handle("GET /api/v1/intel/{route_type}", charged, s.handleIntel)
	s.handle("GET /api/v1/enterprise/entities", enterprise, s.handleEntities)
	s.handle("GET /api/v1/enterprise/assets", enterprise, s.handleEntityAssets)
	s.handle("GET /api/v1/nexus/ip-lookup", charged, s.handleIPLookup)
	s.handle("GET /api/v1/nexus/passive-dns/lookup", charged, s.handlePassiveDNS)
	s.handle("GET /api/v1/nexus/cloud-certs/dns-search", charged, s.handleCertDNSSearch)
	s.handle("GET /api/v1/public/my-ip", public, s.handleMyIP)
	// <routes:brand>
	s.handle("GET /api/v1/enterprise/darkweb/potential-phishing", enterprise, s.handlePhishingFindings)
	s.handle("GET /api/v1/enterprise/darkweb/typosquatting", enterprise, s.handleTyposquattingFindings)
	s.handle("GET /api/v1/enterprise/certificates", enterprise, s.handleCertificates)
	s.handle("POST /api/v1/oem/potential-phishing/search", oemCharged, s.handlePhishingSearch)
	s.handle("POST /api/v1/oem/typosquatting/search", oemCharged, s.handleTyposquattingSearch)
}
