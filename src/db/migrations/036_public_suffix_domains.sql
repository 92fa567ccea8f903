-- Public suffixes are no domain of a workspace's (issue 45): a domain added before the API
-- refused them (`co.uk`, `github.io`) is set to failed, with the reason as its check error. Which
-- names are public suffixes is the Public Suffix List's to say, read from a maintained package
-- (src/lib/public-suffix.ts), not copied here: this migration's step runs in code, in the same
-- transaction, after this file (src/db/migrate.ts, STEPS).
SELECT 1;
