-- A text search of the vulnerabilities ranked the newest 500 matches, but
-- finding them read every match's row of vulns (about 1.3 KB each, one
-- heap page per match: 12,000 pages for a common word at 300,000 CVEs).
-- vulns_search holds only what the search needs (id, publication date,
-- tsvector), so the window is chosen and ranked on narrow rows and vulns
-- is read for the final page alone. The rows are written in date order
-- and walked newest first through (published, id), so a common word's
-- newest 500 matches sit on a few hundred narrow pages. A trigger keeps
-- the table in the same statement as the row (insert, update of the text
-- or date, delete).
CREATE TABLE vulns_search (
    id BIGINT PRIMARY KEY,
    published BIGINT NOT NULL,
    tsv tsvector NOT NULL
);
INSERT INTO vulns_search (id, published, tsv) SELECT id, published, tsv FROM vulns ORDER BY published, id;
CREATE INDEX vulns_search_published ON vulns_search (published, id);
CREATE INDEX vulns_search_tsv ON vulns_search USING GIN (tsv);
ANALYZE vulns_search;

CREATE FUNCTION vulns_search_sync() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM vulns_search WHERE id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.published = OLD.published AND NEW.tsv = OLD.tsv THEN
        RETURN NULL;
    END IF;
    INSERT INTO vulns_search (id, published, tsv) VALUES (NEW.id, NEW.published, NEW.tsv)
        ON CONFLICT (id) DO UPDATE SET published = EXCLUDED.published, tsv = EXCLUDED.tsv;
    RETURN NULL;
END
$$;
CREATE TRIGGER vulns_search_sync AFTER INSERT OR DELETE OR UPDATE OF published, title, description ON vulns
    FOR EACH ROW EXECUTE FUNCTION vulns_search_sync();
