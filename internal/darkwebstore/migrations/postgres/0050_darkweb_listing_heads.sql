-- Listing heads (darkwebstore listheads.go): darkweb_heads also holds,
-- under an email domain's emails listing key (code 18), a copy of the
-- record row of every listing row of a domain with 256 rows or more, so a
-- listing page is one range scan. No table changes: the head builder's
-- last complete pass is forgotten, so that its next pass (at serve's
-- start) builds the listing heads of the records already stored.
DELETE FROM darkweb_heads_done;
