-- The hosts table keeps only the columns a query reads: the name, the two
-- index keys, resolvability and last_seen (covered by the subdomain index),
-- the lower-cased title (the title filter) and the document, which holds
-- everything. domain, ip, first_seen and the flags other than
-- is_resolvable went: flags are posting terms, and no query read the rest.
-- A bulk ingest binds and writes 7 values a host instead of 16.
ALTER TABLE hosts
    DROP COLUMN domain,
    DROP COLUMN ip,
    DROP COLUMN is_live,
    DROP COLUMN is_cloud,
    DROP COLUMN is_cdn,
    DROP COLUMN is_cloudflare,
    DROP COLUMN has_ipv6,
    DROP COLUMN has_private_ip,
    DROP COLUMN first_seen;
