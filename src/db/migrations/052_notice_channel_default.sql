-- Issue 56 (6): how an admin hears of invite requests when they never chose. The column's default
-- was 'slack', written into the row the first time a request came: in a workspace without Slack
-- the admin heard nothing at all, and the Profile screen showed "In Slack" chosen. NULL now means
-- "never chose": the service reads Slack while the workspace has it installed, e-mail otherwise
-- (src/db/admin-notices.ts). Rows holding 'slack' where no Slack is installed held the old default
-- (Slack cannot have been chosen for a purpose there): they become NULL.
ALTER TABLE admin_notice_settings ALTER COLUMN invite_requests DROP NOT NULL;
ALTER TABLE admin_notice_settings ALTER COLUMN invite_requests DROP DEFAULT;
UPDATE admin_notice_settings s SET invite_requests = NULL
 WHERE invite_requests = 'slack'
   AND NOT EXISTS (SELECT 1 FROM users u JOIN chat_installations c ON c.workspace_id = u.workspace_id AND c.active
                    WHERE u.id = s.user_id);
