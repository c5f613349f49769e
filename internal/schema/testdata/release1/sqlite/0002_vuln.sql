-- Vulnerability intelligence. vulns has one row per CVE: the NVD record
-- (doc, JSON) with the columns the feed filters and sorts on; the KEV, EPSS
-- and Exploit-DB sources keep their own tables, so a CVE enriched before
-- its NVD record arrives loses nothing, and vulns carries the flags
-- (is_kev, is_exploit) the feed filters on. Times are Unix seconds.
CREATE TABLE vulns (
    id INTEGER PRIMARY KEY,
    cve_id TEXT NOT NULL UNIQUE,
    has_nvd INTEGER NOT NULL DEFAULT 0,
    published INTEGER NOT NULL DEFAULT 0,
    last_modified INTEGER NOT NULL DEFAULT 0,
    severity TEXT NOT NULL DEFAULT '',
    is_kev INTEGER NOT NULL DEFAULT 0,
    is_exploit INTEGER NOT NULL DEFAULT 0,
    title TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    doc TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX vulns_published ON vulns (published, id);
CREATE INDEX vulns_kev ON vulns (is_kev, published);
CREATE INDEX vulns_exploit ON vulns (is_exploit, published);
CREATE INDEX vulns_severity ON vulns (severity, published);

-- CPE match criteria as part:vendor:product keys, with the CVE's
-- publication time so the newest matches of a product are an index range.
CREATE TABLE vuln_cpes (
    cpe_key TEXT NOT NULL,
    published INTEGER NOT NULL,
    vuln_id INTEGER NOT NULL,
    PRIMARY KEY (cpe_key, published, vuln_id)
) WITHOUT ROWID;
CREATE INDEX vuln_cpes_vuln ON vuln_cpes (vuln_id);

-- The full-text indexes are external-content FTS5 tables kept by the store
-- in the same transaction as the rows, one statement per batch (a trigger
-- per row would flush FTS5's pending terms at every statement).
CREATE VIRTUAL TABLE vulns_fts USING fts5(title, description, content='vulns', content_rowid='id', tokenize='porter unicode61');

CREATE TABLE vuln_kev (
    cve_id TEXT PRIMARY KEY,
    date_added INTEGER NOT NULL DEFAULT 0,
    due_date INTEGER NOT NULL DEFAULT 0,
    required_action TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '',
    doc TEXT NOT NULL
);

CREATE TABLE vuln_epss (
    cve_id TEXT PRIMARY KEY,
    epss REAL NOT NULL,
    percentile REAL NOT NULL,
    score_date INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE vuln_exploits (
    id INTEGER PRIMARY KEY,
    edb_id INTEGER NOT NULL UNIQUE,
    cve_id TEXT NOT NULL DEFAULT '',
    date_added INTEGER NOT NULL DEFAULT 0,
    title TEXT NOT NULL DEFAULT '',
    doc TEXT NOT NULL
);
CREATE INDEX vuln_exploits_added ON vuln_exploits (date_added, id);
CREATE TABLE vuln_exploit_cves (
    cve_id TEXT NOT NULL,
    exploit_id INTEGER NOT NULL,
    PRIMARY KEY (cve_id, exploit_id)
) WITHOUT ROWID;
CREATE INDEX vuln_exploit_cves_exploit ON vuln_exploit_cves (exploit_id);

CREATE VIRTUAL TABLE vuln_exploits_fts USING fts5(title, content='vuln_exploits', content_rowid='id', tokenize='porter unicode61');

-- Package advisories (OSV records of any database, GHSA included).
CREATE TABLE vuln_advisories (
    id INTEGER PRIMARY KEY,
    adv_id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL DEFAULT '',
    published INTEGER NOT NULL DEFAULT 0,
    modified INTEGER NOT NULL DEFAULT 0,
    severity TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    details TEXT NOT NULL DEFAULT '',
    doc TEXT NOT NULL
);
CREATE INDEX vuln_advisories_published ON vuln_advisories (published, id);
CREATE INDEX vuln_advisories_source ON vuln_advisories (source, published);
-- alias links an advisory to the other ids of the same issue (CVE, GHSA...).
CREATE TABLE vuln_advisory_aliases (
    alias TEXT NOT NULL,
    advisory_id INTEGER NOT NULL,
    PRIMARY KEY (alias, advisory_id)
) WITHOUT ROWID;
CREATE INDEX vuln_advisory_aliases_adv ON vuln_advisory_aliases (advisory_id);
-- Affected packages, lower-cased; ecosystem_base is the part before ':'
-- ("debian" for "Debian:12").
CREATE TABLE vuln_advisory_packages (
    ecosystem TEXT NOT NULL,
    ecosystem_base TEXT NOT NULL,
    name TEXT NOT NULL,
    advisory_id INTEGER NOT NULL,
    PRIMARY KEY (ecosystem, name, advisory_id)
) WITHOUT ROWID;
CREATE INDEX vuln_advisory_packages_base ON vuln_advisory_packages (ecosystem_base, name);
CREATE INDEX vuln_advisory_packages_adv ON vuln_advisory_packages (advisory_id);

CREATE VIRTUAL TABLE vuln_advisories_fts USING fts5(summary, details, content='vuln_advisories', content_rowid='id', tokenize='porter unicode61');

-- Scheduled sync state per upstream source: HTTP validators for
-- conditional requests and the outcome of the last run.
CREATE TABLE vuln_sync (
    source TEXT PRIMARY KEY,
    url TEXT NOT NULL DEFAULT '',
    etag TEXT NOT NULL DEFAULT '',
    last_modified TEXT NOT NULL DEFAULT '',
    last_attempt INTEGER NOT NULL DEFAULT 0,
    last_success INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    records INTEGER NOT NULL DEFAULT 0
);
