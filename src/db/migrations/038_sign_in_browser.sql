-- The confirmation an invite link e-mails, and the join link a verified domain e-mails, remember
-- the browser that asked for them, as login links do (013): the SHA-256 of the random value in
-- that browser's HttpOnly login_link_browser cookie. The page the link opens says when it is
-- opened in another browser (someone may have sent it) before anyone is signed in.
ALTER TABLE invite_link_joins ADD COLUMN browser_hash text;
ALTER TABLE domain_join_tokens ADD COLUMN browser_hash text;
