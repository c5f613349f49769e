-- A substring filter (the q of the typosquatting and potential-phishing
-- listings: domain or base_domain LIKE '%q%') read every entry of the
-- listing index to count its matches. An FTS5 trigram index of the two
-- names narrows it to the rows holding q's trigrams (q of three characters
-- or more; the LIKE still decides). It is an external-content table over
-- brand_findings kept by triggers: names never change once stored, and a
-- finding deleted with its organization (ON DELETE CASCADE) fires the
-- delete trigger too.
CREATE VIRTUAL TABLE brand_findings_grams USING fts5(
    domain, base_domain, content='brand_findings', content_rowid='id', tokenize='trigram');
INSERT INTO brand_findings_grams (brand_findings_grams) VALUES ('rebuild');
CREATE TRIGGER brand_findings_grams_insert AFTER INSERT ON brand_findings BEGIN
    INSERT INTO brand_findings_grams (rowid, domain, base_domain) VALUES (new.id, new.domain, new.base_domain);
END;
CREATE TRIGGER brand_findings_grams_delete AFTER DELETE ON brand_findings BEGIN
    INSERT INTO brand_findings_grams (brand_findings_grams, rowid, domain, base_domain)
        VALUES ('delete', old.id, old.domain, old.base_domain);
END;
CREATE TRIGGER brand_findings_grams_update AFTER UPDATE OF domain, base_domain ON brand_findings BEGIN
    INSERT INTO brand_findings_grams (brand_findings_grams, rowid, domain, base_domain)
        VALUES ('delete', old.id, old.domain, old.base_domain);
    INSERT INTO brand_findings_grams (rowid, domain, base_domain) VALUES (new.id, new.domain, new.base_domain);
END;
