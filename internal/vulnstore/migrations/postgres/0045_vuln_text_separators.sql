-- PostgreSQL's text parser reads "Escalation/Remote", "index.php",
-- "www.example.com" or "admin@host" as one path, file, host or email
-- token, where SQLite's FTS5 reads the words in them, so the engines
-- matched different records for the same search ("remote" missed
-- "Privileges Escalation/Remote Code Execution" here). The text is
-- indexed with those separators read as spaces, as FTS5 reads them.
ALTER TABLE vulns DROP COLUMN tsv;
ALTER TABLE vulns ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', translate(title, '/\.@:', '     ')), 'A') ||
    setweight(to_tsvector('english', translate(description, '/\.@:', '     ')), 'B')) STORED;
CREATE INDEX vulns_tsv ON vulns USING GIN (tsv);
-- The narrow search table copies the vector (migration 16).
UPDATE vulns_search n SET tsv = v.tsv FROM vulns v WHERE v.id = n.id;

ALTER TABLE vuln_exploits DROP COLUMN tsv;
ALTER TABLE vuln_exploits ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('english', translate(title, '/\.@:', '     '))) STORED;
CREATE INDEX vuln_exploits_tsv ON vuln_exploits USING GIN (tsv);

ALTER TABLE vuln_advisories DROP COLUMN tsv;
ALTER TABLE vuln_advisories ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', translate(summary, '/\.@:', '     ')), 'A') ||
    setweight(to_tsvector('english', translate(details, '/\.@:', '     ')), 'B')) STORED;
CREATE INDEX vuln_advisories_tsv ON vuln_advisories USING GIN (tsv);
