package api

// The MCP tool catalog: FullHunt's tool names and argument names (its public
// "Agentic AI" reference), each mapped onto the REST route that answers it.
// A tool is a second way into a route, never a second implementation: the
// call is dispatched through the same chain (key, tier, rate limit, credits,
// audit) as a REST request. A tool whose route is not registered is left out
// of tools/list, so the list never names a tool that cannot answer.

// mcpArg is one tool argument and where it goes in the REST request.
type mcpArg struct {
	name     string // the tool's argument name
	param    string // the REST parameter it fills (default: name)
	in       string // "path", "query" or "body"
	required bool
	desc     string   // default: the REST parameter's OpenAPI description
	enum     []string // allowed values, when the REST route has a closed set
}

// mcpTool is one tool of the catalog.
type mcpTool struct {
	name  string
	route string // the registered pattern, e.g. "GET /api/v1/host/{host}"
	desc  string
	args  []mcpArg
	// fixed are request values the tool sets itself (path or query).
	fixed map[string]string
	// bodyFromSchema: every property of the route's OpenAPI request body is
	// an argument of the same name (global search's 47 filters).
	bodyFromSchema bool
	// queryFromSchema: every query parameter of the route's OpenAPI
	// operation is an argument of the same name.
	queryFromSchema bool
}

// Argument constructors. The JSON type, bounds and closed sets of an
// argument come from the OpenAPI document of the parameter it fills.
func q(name string) mcpArg       { return mcpArg{name: name, in: "query"} }
func qReq(name string) mcpArg    { return mcpArg{name: name, in: "query", required: true} }
func pathArg(name string) mcpArg { return mcpArg{name: name, in: "path", required: true} }
func body(name string) mcpArg    { return mcpArg{name: name, in: "body"} }
func bodyReq(name string) mcpArg { return mcpArg{name: name, in: "body", required: true} }

// rename returns a with the REST parameter param.
func (a mcpArg) rename(param string) mcpArg { a.param = param; return a }

// about returns a with its own description.
func (a mcpArg) about(desc string) mcpArg { a.desc = desc; return a }

// oneOf returns a restricted to values.
func (a mcpArg) oneOf(values ...string) mcpArg { a.enum = values; return a }

// intel is an /intel/{route_type} tool.
func intel(name, routeType, desc string, args ...mcpArg) mcpTool {
	return mcpTool{name: name, route: "GET /api/v1/intel/{route_type}", desc: desc, args: args,
		fixed: map[string]string{"route_type": routeType}}
}

const (
	dateArgDesc = "Only results on or after (from_date) or before (to_date) this date."
	oemNote     = " Needs the OEM module; one OEM credit per successful call."
	entNote     = " Needs an Enterprise account; no credit."
)

// mcpCatalog is every tool Periscope can offer, in FullHunt's order.
var mcpCatalog = []mcpTool{
	// Account and public.
	{name: "auth_status", route: "GET /api/v1/auth/status",
		desc: "The account behind the key: user, plan and credit balance. No credit."},
	{name: "public_my_ip", route: "GET /api/v1/public/my-ip",
		desc: "The client address the API sees for this call (the MCP client's, or its proxy's). No credit."},

	// Domain and host.
	{name: "fullhunt_domain_details", route: "GET /api/v1/domain/{domain}/details",
		desc: "A domain's hosts as full host objects (ports, HTTP, DNS, certificate, ASN, tags), most recently seen first. One credit.",
		args: []mcpArg{pathArg("domain").about("The domain, e.g. example.com."), q("resolvable_only"), q("page"), q("limit")}},
	{name: "fullhunt_domain_subdomains", route: "GET /api/v1/domain/{domain}/subdomains",
		desc: "The names of a domain's hosts (subdomains). One credit.",
		args: []mcpArg{pathArg("domain").about("The domain, e.g. example.com."), q("resolvable_only")}},
	{name: "fullhunt_host", route: "GET /api/v1/host/{host}",
		desc: "One host as a full host object. One credit; an unknown host costs nothing.",
		args: []mcpArg{pathArg("host").about("A host name or IP address, e.g. www.example.com.")}},
	{name: "fullhunt_scan", route: "GET /api/v1/attack-surface/on-demand-scan",
		desc: "Start an on-demand scan of a domain, IP or CIDR the account owns (Enterprise). One credit.",
		args: []mcpArg{qReq("target")}},

	// Search and vulnerability intelligence.
	{name: "search_organizations", route: "GET /api/v1/organizations-db/search",
		desc: "Organization profiles built from certificates, WHOIS registrants and ASNs (3 to 100 characters). One credit.",
		args: []mcpArg{qReq("query")}},
	{name: "search_vulnerabilities", route: "GET /api/v1/vulnerability-intelligence/vulnerability-search",
		desc: "CVE search: an exact CVE id (e.g. CVE-2021-44228), an exact CPE string, or text of 3 to 100 characters. One credit.",
		args: []mcpArg{qReq("query")}},
	{name: "search_exploits", route: "GET /api/v1/vulnerability-intelligence/exploits-search",
		desc: "Exploit-DB and Metasploit search by CVE id or text (3 to 100 characters). One credit.",
		args: []mcpArg{qReq("query")}},
	{name: "search_advisories", route: "GET /api/v1/vulnerability-intelligence/advisories-search",
		desc: "OSV and GitHub advisories by text, ecosystem or package (ecosystem/name, e.g. npm/lodash); at least one argument. One credit.",
		args: []mcpArg{q("query"), q("ecosystem"), q("package")}},
	{name: "vulnerability_intelligence_feed", route: "GET /api/v1/vulnerability-intelligence/feed",
		desc:            "Vulnerabilities, exploits and advisories published in the last days (1 to 7). One credit.",
		queryFromSchema: true},

	// Data intelligence.
	intel("intel_host", "host", "Hosts whose name is exactly this host. One credit.", qReq("host")),
	intel("intel_tag", "tag", "Hosts carrying a tag (e.g. vpn, login-page). One credit.", qReq("tag")),
	intel("intel_web_tech", "web-tech", "Hosts running a web technology (e.g. WordPress). One credit.", qReq("tech")),
	intel("intel_product", "product", "Hosts running a product (e.g. nginx). One credit.", qReq("product")),
	intel("intel_domain", "domain", "Hosts under a domain. One credit.", qReq("domain")),
	intel("intel_ip_to_hosts", "ip-to-hosts", "Host names that resolve to an IP address. One credit.", qReq("ip")),
	intel("intel_asn_to_hosts", "asn-to-hosts", "Hosts announced by an ASN (a number, e.g. 13335). One credit.", qReq("asn")),
	intel("intel_asn_to_virtual_hosts", "asn-to-virtual-hosts", "Named (virtual) hosts of an ASN. One credit.", qReq("asn")),
	intel("intel_ip_range_to_hosts", "ip-range-to-hosts", "Hosts whose address lies between ip_start and ip_end. One credit.", qReq("ip_start"), qReq("ip_end")),
	intel("intel_dns_mx_to_hosts", "dns-mx-to-hosts", "Hosts whose DNS MX names this mail server. One credit.", qReq("dns_mx")),
	intel("intel_dns_ns_to_hosts", "dns-ns-to-hosts", "Hosts whose DNS NS names this name server. One credit.", qReq("dns_ns")),

	// Global search.
	{name: "global_search", route: "POST /api/v1/global/search",
		desc:           "Whole-database host search: the filters are ANDed (domain, host, ip, port, product, tech, tag, country, asn, http_title, dns_*, cert_*, is_*, ...), plus page and limit. One credit.",
		bodyFromSchema: true},

	// Nexus.
	{name: "nexus_ip_lookup", route: "GET /api/v1/nexus/ip-lookup",
		desc: "What Periscope knows of an IP address or host name: ASN, organization, location, cloud, hosts. One credit.",
		args: []mcpArg{qReq("ip").rename("query").about("An IP address or host name.")}},
	{name: "nexus_tor_check_ip", route: "GET /api/v1/nexus/tor/check-ip",
		desc: "Whether an IP address is a Tor exit node in the stored exit list. One credit.",
		args: []mcpArg{qReq("ip")}},
	{name: "nexus_certs_dns_search", route: "GET /api/v1/nexus/cloud-certs/dns-search",
		desc: "Certificates whose DNS names start with this prefix (at least 3 characters). One credit.",
		args: []mcpArg{qReq("dns_name").rename("query").about("A DNS name or its prefix, at least 3 characters.")}},
	{name: "nexus_passive_dns_lookup", route: "GET /api/v1/nexus/passive-dns/lookup",
		desc: "The DNS records seen for a domain over time. One credit.",
		args: []mcpArg{qReq("domain")}},
	{name: "nexus_domain_collection_lookup", route: "GET /api/v1/nexus/domain-collection/lookup",
		desc: "A domain's web profile: titles, descriptions, logos and social links seen on its hosts. One credit.",
		args: []mcpArg{qReq("domain")}},
	{name: "nexus_domain_collection_company_lookup", route: "GET /api/v1/nexus/domain-collection/company-lookup",
		desc: "Domains whose web profile names a company. One credit.",
		args: []mcpArg{qReq("company").rename("query").about("A company name.")}},
	{name: "nexus_whois_lookup", route: "GET /api/v1/nexus/whois/lookup",
		desc: "The stored WHOIS/RDAP record of a domain. One credit.",
		args: []mcpArg{qReq("domain")}},
	{name: "nexus_whois_search", route: "GET /api/v1/nexus/whois/search",
		desc: "Stored WHOIS records by registrar, name server, status or expiry (ORed), within a TLD (ANDed); limit at most 10. One credit.",
		args: []mcpArg{q("registrar"), q("nameserver"), q("tld"), q("status"), q("expires_before"), q("limit")}},

	// Enterprise (read routes only: the write routes are not tools).
	{name: "enterprise_organizations", route: "GET /api/v1/enterprise/organizations",
		desc: "The account's monitored organizations." + entNote},
	{name: "enterprise_alerts", route: "GET /api/v1/enterprise/alerts",
		desc: "Alerts of the account's organizations, newest first." + entNote,
		args: []mcpArg{q("org"), q("page"), q("from_date").rename("from").about(dateArgDesc), q("to_date").rename("to").about(dateArgDesc)}},
	{name: "enterprise_vulnerabilities", route: "GET /api/v1/enterprise/vulnerabilities",
		desc: "Vulnerabilities found on the organization's hosts." + entNote,
		args: []mcpArg{q("org")}},
	{name: "enterprise_entities", route: "GET /api/v1/enterprise/entities",
		desc: "The organization's entities (domains and IP ranges) with asset counts." + entNote,
		args: []mcpArg{q("org")}},
	{name: "enterprise_assets", route: "GET /api/v1/enterprise/assets",
		desc: "The hosts of one entity (a domain or IP range of the account)." + entNote,
		args: []mcpArg{qReq("entity")}},
	{name: "enterprise_suggested_domains", route: "GET /api/v1/enterprise/suggested-domains",
		desc: "Domains that likely belong to the account's organizations but are not assets yet." + entNote,
		args: []mcpArg{q("query"), q("page"), q("from_date").rename("from").about(dateArgDesc), q("to_date").rename("to").about(dateArgDesc)}},
	{name: "enterprise_on_demand_scans", route: "GET /api/v1/enterprise/on-demand-scans",
		desc: "Start an on-demand scan of an asset the account owns. One credit.",
		args: []mcpArg{qReq("target")}},
	{name: "enterprise_certificates", route: "GET /api/v1/enterprise/certificates",
		desc: "New certificates seen for the account's domains." + entNote,
		args: []mcpArg{q("q"), q("page"), q("from_date").rename("from").about(dateArgDesc), q("to_date").rename("to").about(dateArgDesc)}},
	{name: "enterprise_darkweb_compromised_credentials", route: "GET /api/v1/enterprise/darkweb/compromised-credentials",
		desc: "Breached credentials under the account's domains (secrets shown only for verified domains)." + entNote,
		args: []mcpArg{q("query"), q("page")}},
	{name: "enterprise_darkweb_discovered_emails", route: "GET /api/v1/enterprise/darkweb/discovered-emails",
		desc: "E-mail addresses of the account's domains found in breach data." + entNote,
		args: []mcpArg{q("query"), q("page")}},
	{name: "enterprise_darkweb_potential_phishing", route: "GET /api/v1/enterprise/darkweb/potential-phishing",
		desc: "Potential phishing domains imitating the account's domains." + entNote,
		args: []mcpArg{q("q"), q("page"), q("from_date").rename("from").about(dateArgDesc), q("to_date").rename("to").about(dateArgDesc)}},
	{name: "enterprise_darkweb_typosquatting", route: "GET /api/v1/enterprise/darkweb/typosquatting",
		desc: "Registered typosquatting domains of the account's domains." + entNote,
		args: []mcpArg{q("q"), q("page"), q("from_date").rename("from").about(dateArgDesc), q("to_date").rename("to").about(dateArgDesc)}},

	// OEM.
	{name: "oem_attack_surface_search", route: "POST /api/v1/oem/attack-surface/search",
		desc: "The hosts of a domain or of an IP range (CIDR of at most 4,096 addresses)." + oemNote,
		args: []mcpArg{bodyReq("target").rename("query").about("A domain, or a CIDR when query_type is ip_range."), body("query_type").rename("type").oneOf("domain", "ip_range")}},
	{name: "oem_attack_surface_host", route: "POST /api/v1/oem/attack-surface/host",
		desc: "One host by name or IP address." + oemNote,
		args: []mcpArg{bodyReq("query").about("A host name or IP address.")}},
	{name: "oem_organizations_search", route: "POST /api/v1/oem/organizations/search",
		desc: "Organization profiles by domain or organization name (3 to 100 characters)." + oemNote,
		args: []mcpArg{bodyReq("query"), body("query_type").rename("type").oneOf("domain", "organization")}},
	{name: "oem_darkweb_search", route: "POST /api/v1/oem/darkweb/search",
		desc: "Breach-data search by one of 15 types (default email)." + oemNote,
		args: []mcpArg{bodyReq("query"), body("query_type").rename("type").oneOf("username", "name", "email", "hostname", "mac_address", "ip_address", "org_alias", "bin", "cve", "domain", "password", "hashed_password", "vin", "address", "phone")}},
	{name: "oem_typosquatting_search", route: "POST /api/v1/oem/typosquatting/search",
		desc: "Registered typosquatting domains of a base domain." + oemNote,
		args: []mcpArg{bodyReq("query").about("A base domain, e.g. example.com.")}},
	{name: "oem_potential_phishing_search", route: "POST /api/v1/oem/potential-phishing/search",
		desc: "Potential phishing domains imitating a base domain." + oemNote,
		args: []mcpArg{bodyReq("query").about("A base domain, e.g. example.com.")}},
	{name: "oem_vulnerabilities_search", route: "POST /api/v1/oem/vulnerabilities/search",
		desc: "Vulnerabilities found on the hosts of a host, domain or IP range." + oemNote,
		args: []mcpArg{bodyReq("query"), body("query_type").rename("type").oneOf("host", "domain", "ip_range")}},
	{name: "oem_alerts_search", route: "POST /api/v1/oem/alerts/search",
		desc: "Alerts raised for a host or domain." + oemNote,
		args: []mcpArg{bodyReq("query"), body("query_type").rename("type").oneOf("host", "domain")}},
	{name: "oem_historical_hosts_search", route: "POST /api/v1/oem/historical-hosts/search",
		desc: "Past states of a host or of a domain's hosts, from the change ledger." + oemNote,
		args: []mcpArg{bodyReq("query"), body("query_type").rename("type").oneOf("host", "domain")}},
	{name: "oem_whois_lookup", route: "POST /api/v1/oem/whois/lookup",
		desc: "The WHOIS/RDAP record of a domain (stored, or asked of the registry)." + oemNote,
		args: []mcpArg{bodyReq("domain")}},
	{name: "oem_whois_search", route: "POST /api/v1/oem/whois/search",
		desc: "Stored WHOIS records by registrar, name server, TLD, status and expiry (ANDed); limit at most 10." + oemNote,
		args: []mcpArg{body("registrar"), body("nameserver"), body("tld"), body("status"), body("expires_before"), body("limit")}},
	{name: "oem_vulnerability_search", route: "POST /api/v1/oem/vulnerability-intelligence/vulnerability-search",
		desc: "CVE search (up to 50 results)." + oemNote,
		args: []mcpArg{bodyReq("query")}},
	{name: "oem_exploits_search", route: "POST /api/v1/oem/vulnerability-intelligence/exploits-search",
		desc: "Exploit search (up to 50 results)." + oemNote,
		args: []mcpArg{bodyReq("query")}},
	{name: "oem_advisories_search", route: "POST /api/v1/oem/vulnerability-intelligence/advisories-search",
		desc: "Advisory search by text, ecosystem or package (up to 50 results)." + oemNote,
		args: []mcpArg{body("query"), body("ecosystem"), body("package"), body("no_cache")}},
	{name: "oem_vulnerability_intelligence_feed", route: "POST /api/v1/oem/vulnerability-intelligence/feed",
		desc: "Vulnerabilities, exploits and advisories of the last days, with filters." + oemNote,
		args: []mcpArg{body("days"), body("page"), body("per_page"), body("result_type").rename("type"), body("keywords"),
			body("severity"), body("kev"), body("exploit_available"), body("source"), body("ecosystem"), body("package")}},
	{name: "oem_on_demand_scan", route: "POST /api/v1/oem/on-demand-scan",
		desc: "Start an on-demand scan of a domain, IP range or host." + oemNote,
		args: []mcpArg{bodyReq("target"), body("query_type").rename("type").oneOf("domain", "ip_range", "host")}},
	{name: "oem_scan_status", route: "POST /api/v1/oem/on-demand-scan/scan-status",
		desc: "The status and results of an on-demand scan. No credit.",
		args: []mcpArg{bodyReq("scan_id")}},
	{name: "oem_account_credits", route: "POST /api/v1/oem/account/credits",
		desc: "The OEM credit balance. No credit."},
	{name: "oem_account_audit_logs", route: "POST /api/v1/oem/account/audit-logs",
		desc: "The account's OEM audit log (dates YYYY-MM-DD). No credit.",
		args: []mcpArg{body("page"), body("start_date"), body("end_date")}},

	// Periscope's own additions.
	{name: "hosts_search", route: "GET /api/v1/hosts/search",
		desc:            "Host search with Periscope's query language (e.g. `port:443 country:US -tag:cdn`), with facet counts. One credit.",
		queryFromSchema: true},
	{name: "hosts_count", route: "GET /api/v1/hosts/count",
		desc:            "How many hosts a query matches, with facet counts, without results. No credit.",
		queryFromSchema: true},
	{name: "host_history", route: "GET /api/v1/host/{host}/history",
		desc:            "The change history of a host (ports, names, certificates, products), newest first. One credit.",
		queryFromSchema: true},
}
