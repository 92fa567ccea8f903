-- A login link remembers the browser that asked for it: the SHA-256 of a random value kept in
-- that browser's HttpOnly login_link_browser cookie. The landing page says whether the link was
-- requested here; a link opened elsewhere still works, after a confirmation that says so.
ALTER TABLE login_tokens ADD COLUMN browser_hash text;
