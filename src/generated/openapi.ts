// This file is generated from openapi.yaml by `npm run generate` (openapi-typescript).
// Do not edit it by hand: change the contract and regenerate. CI fails when it is stale.
/* eslint-disable */
export interface paths {
    "/api/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness and database check
         * @description Checks the database with a ping. Concurrent checks share one ping, and a successful ping answers for `HEALTH_CACHE_MS` (default 1 s, 0 to ping on every check), so polling never loads the database; a failed ping is never reused. With load shedding on (`LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS`), `checks.eventLoop` reports the event loop's delay, and while it is past the threshold this operation answers 503 with that check `overloaded` (it is not shed itself: it says why).
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Liveness and database check, for uptime checkers
         * @description The checks of `GET /api/health` (the same shared, cached ping and event-loop state), answered as a status alone: 200, or 503 with `Retry-After` when the database does not answer or the event loop is overloaded. No body, as for every HEAD.
         */
        head: operations["headHealth"];
        patch?: never;
        trace?: never;
    };
    "/api/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This contract, as JSON */
        get: operations["getOpenapiJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** API reference page rendered from this contract */
        get: operations["getDocs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/docs/standalone.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The API reference page's script (Scalar), served locally */
        get: operations["getDocsScript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/signup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Accept an invitation (fallback path) and sign in
         * @description Creates the user with the invited role in the inviting workspace, consumes the token
         *     (single use) and sets the `service_session` cookie. Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): a sign-up sets a person's session.
         */
        post: operations["postAuthSignup"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/setup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * First run — create the first workspace and its admin, and sign in
         * @description While no workspace exists, each start of the service logs a one-time link
         *     `{PUBLIC_URL}/setup?token=…`; the `/setup` page sends its token here with the workspace's
         *     name and the admin's e-mail and name. Creates the workspace and its first admin (audited
         *     as an admin invitation made by `setup` and accepted by the admin), sets the
         *     `service_session` cookie and answers 201. Every link logged while no workspace exists
         *     works until one is set up (by this operation or `npm run create-admin`); from then on the
         *     answer is 410 `SETUP_COMPLETE`, whatever the token. Limited per client IP
         *     (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30, shared with `/api/auth/*`).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): setting up the service makes its first admin and signs them in.
         */
        post: operations["postSetup"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/invitation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Preview an invitation without consuming its token
         * @description What the signup page shows before the invitee accepts. The page's script makes this call
         *     once it has loaded (fetching `/signup?token=…`, as link scanners do, calls nothing): the
         *     first preview of a pending invitation records that it was viewed (`viewedAt`, event
         *     `invitation.viewed`); later previews record nothing. Limited per client IP
         *     (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it belongs to the sign-up flow of the person holding the link.
         */
        post: operations["postAuthInvitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/login-link": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * E-mail a one-time login link
         * @description Always answers 202 with the same body, whether or not the address belongs to a user
         *     (no account enumeration). The link is valid for 15 minutes and works once.
         *     An address at a domain whose workspace requires single sign-on is refused, 403
         *     `SSO_REQUIRED`, whoever it belongs to: the answer depends on the domain alone, which the
         *     sign-in page sends to its provider anyway. With `breakGlass: true` such an address is
         *     answered 202 like any other, and only a workspace admin's is e-mailed a link (break-glass).
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it starts a person's sign-in.
         */
        post: operations["postAuthLoginLink"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/login-link/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Preview a login link without using it
         * @description The account a login-link token signs in to (its e-mail and workspace), and whether this
         *     browser is the one that asked for the link (`sameBrowser`: the `login_link_browser` cookie
         *     that `POST /api/auth/login-link` set matches the one stored with the token). The token is
         *     not used: the landing page `/login?token=…` shows this and signs in only when the person
         *     confirms ("Sign in as …"), with a warning when the link was requested from another browser.
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it belongs to a person's sign-in.
         */
        post: operations["postAuthLoginLinkPreview"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange a login-link token for a session
         * @description Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it signs a person in.
         */
        post: operations["postAuthVerify"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke the current session and clear the cookie
         * @description Idempotent; answers 204 with or without a valid session. Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other public operations, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it ends a person's session.
         */
        post: operations["postAuthLogout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/oauth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Start identity-provider login (WorkOS AuthKit)
         * @description Stores a single-use `state` (10 minutes) bound to this browser, then redirects. Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other public operations, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it starts a person's sign-in at the identity provider.
         */
        get: operations["getOauthLogin"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/oauth/callback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Identity-provider login callback
         * @description Checks the `state`, exchanges the code at the identity provider and signs in. Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other public operations, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it is the identity provider's sign-in callback.
         */
        get: operations["getOauthCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/oauth/sso": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Start a sign-in through the single sign-on connection serving an address (or an admin's test of one)
         * @description With `email`: the connection serving the address's domain (a verified domain of some workspace) is found and the browser is redirected to its identity provider, OpenID Connect or SAML 2.0, with a single-use `state` (10 minutes) bound to this browser by an HttpOnly cookie; no connection serves it: 404 `SSO_CONNECTION_NOT_FOUND` (sign in with an e-mailed link instead). With `connection`: an admin's **test** sign-in of one of their workspace's connections (the admin's session is required: 401 without one, 403 `FORBIDDEN` for a member); its callback shows the claims received (200 `SsoTestSignIn`) and signs no one in. Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other public operations, default 30; 429 beyond).
         *     A person's browser navigating here (an `Accept` that prefers `text/html` to `application/json`) gets an answer that signs no one in as a page in words (`text/html`) with the same status: what to do next and the short code for support, never the provider's message; other clients get the JSON below, unchanged.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it starts a person's sign-in at their identity provider.
         */
        get: operations["getOauthSso"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/oauth/sso/callback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OpenID Connect callback of a single sign-on connection (the redirect URI of every OIDC connection)
         * @description Checks the `state` against this browser's cookie and uses it up, then the provider's answer (RFC 9207 `iss`, the code exchanged with PKCE, the ID token's signature, issuer, audience, times and nonce) and decides who signs in: the member linked to this identity (connection, issuer, subject); at the first sign-in, the member holding the address — only at one of the connection's verified domains and when the provider vouches for it — or a pending invitation for it, or, when the connection creates accounts, a new member with its default role. A suspended member gets the answer a stranger gets. Every refusal is 403 `SSO_SIGN_IN_REFUSED` with a short `details.reason`, recorded in the audit trail (`sso.sign_in_refused`). Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other public operations, default 30; 429 beyond).
         *     A person's browser navigating here (an `Accept` that prefers `text/html` to `application/json`) gets an answer that signs no one in as a page in words (`text/html`) with the same status: what to do next and the short code for support, never the provider's message; other clients get the JSON below, unchanged. A test sign-in's claims are a page too.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it is the identity provider's sign-in callback.
         */
        get: operations["getOauthSsoCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/oauth/slack/install": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Start the Slack app install (OAuth v2)
         * @description Admin session required. A caller without a valid session is redirected (302) to `/login` instead of being answered 401, because this link is opened by a person in a browser.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): installing Slack is an OAuth flow in an admin's browser.
         */
        get: operations["getOauthSlackInstall"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/oauth/slack/callback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Slack OAuth v2 callback; stores the installation
         * @description Checks the `state` of the admin's install, exchanges the code at Slack and stores the installation. Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other public operations, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it is Slack's OAuth callback.
         */
        get: operations["getOauthSlackCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/slack/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Slack Events API intake
         * @description Authenticated by Slack's request signature (`X-Slack-Signature`, `X-Slack-Request-Timestamp`)
         *     over the raw body. Events are recorded durably, deduplicated by `event_id`, and processed
         *     after the acknowledgement. The request is validated (400, 413, 415) before the signature
         *     is checked (401), since the signature covers the raw body.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): Slack calls it, authenticated by its signature.
         */
        post: operations["postSlackEvents"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/slack/commands": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Slack slash command intake (`/invite <email> [admin|member]`)
         * @description Authenticated by Slack's request signature over the raw form body, like event intake.
         *     The text is checked at once (an e-mail address that REST would refuse gets the usage as
         *     an ephemeral answer); otherwise the command is recorded durably and acknowledged, and the
         *     work (invite, or an invite request under the `request` policy) happens after the
         *     acknowledgement, its outcome posted to the command's `response_url`. The request is
         *     validated (400, 413, 415) before the signature is checked (401), since the signature
         *     covers the raw body.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): Slack calls it, authenticated by its signature.
         */
        post: operations["postSlackCommands"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/slack/interactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Slack interactivity intake (Block Kit buttons, modal submissions, shortcuts)
         * @description Slack posts `payload`, a JSON document (`block_actions`, `view_submission`, `shortcut`),
         *     form-encoded and signed like every Slack request. A modal with invalid e-mail addresses
         *     is answered at once with `response_action: errors`; everything else is recorded durably,
         *     acknowledged, and done after the acknowledgement. Every click is authorized against this
         *     service's own users (an admin of the installing workspace), never Slack's admin status.
         *     The request is validated (400, 413, 415) before the signature is checked (401), since
         *     the signature covers the raw body.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): Slack calls it, authenticated by its signature.
         */
        post: operations["postSlackInteractions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/email-events/resend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resend's webhook (e-mail bounces and delays)
         * @description Resend's signed webhook (Svix, the Standard Webhooks scheme): `svix-id`, `svix-timestamp`
         *     and `svix-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` with the
         *     `RESEND_WEBHOOK_SECRET` of the endpoint, `whsec_…`); the timestamp must be within 5
         *     minutes of the server's clock. Anything unsigned, forged or stale is 401 and changes
         *     nothing; so is every request while `RESEND_WEBHOOK_SECRET` is not set. The request is
         *     validated (400, 413, 415) before the signature is checked (401), since the signature
         *     covers the raw body.
         *
         *     `email.bounced` with `bounce.type` `Permanent` marks the invitation `bounced` (and emits
         *     `invitation.bounced`); any other bounce, and `email.delivery_delayed`, is recorded as the
         *     invitation's last delivery error and nothing else. The invitation is the one named by the
         *     e-mail's `invitation_id` tag, or else the pending invitations e-mailed to the bounced
         *     address. Other event types are acknowledged and ignored. A delivery is applied once: the
         *     same `svix-id` again (a replay within the signature window) answers `ignored`. A report
         *     about an e-mail made (`data.created_at`) before the invitation's last send is recorded in
         *     the audit trail (`invitation.bounce_superseded`) and not applied (`recorded`, 0 invitations).
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): the e-mail provider calls it, authenticated by its signature.
         */
        post: operations["postEmailEventsResend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/workspace/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's workspace settings (who may invite)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getWorkspaceSettings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change the workspace settings (its name, who may invite, invitation reminders)
         * @description `name`: the workspace's new name (surrounding spaces dropped; 1 to 200 characters besides
         *     them). `invitePolicy`: `admins` (only admins invite), `request` (members ask in Slack, admins
         *     approve or deny), `members` (members may invite members; only admins invite admins).
         *     `invitationReminderDays`: 1 to 7 days before expiry, or `null` for no reminders.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        patch: operations["patchWorkspaceSettings"];
        trace?: never;
    };
    "/api/workspace/branding": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's look (display name, accent colour, sender name, logo)
         * @description What the workspace set of its look, applied to every e-mail it sends and every page a person opens before signing in; `null`: not set (e-mails and pages use the workspace's name, the service's accent colour, and "<display name> via <service>" as the sender name). The logo is served publicly under its content's hash (`GET /branding/logos/{file}`).
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getWorkspaceBranding"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change the workspace's display name, accent colour or sender name
         * @description `displayName`: what e-mails and pages call the workspace (1 to 100 characters, surrounding spaces dropped; `null`: its name). `accentColor`: `#rrggbb`, the colour of links and buttons in its e-mails and pages; it must reach WCAG 2.x AA contrast (4.5:1) against white, as white button text sits on it and it sits as link text on white: below, 422 `ACCENT_COLOR_CONTRAST_TOO_LOW` with the ratio it reached in `details.contrast` and the field in `details.field` (`null`: the service's colour). `senderName`: the From name of its e-mails (the address is unchanged; `null`: "<display name> via <service>"). Changes are audited (`workspace.branding_changed`, with what they replaced).
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        patch: operations["patchWorkspaceBranding"];
        trace?: never;
    };
    "/api/workspace/branding/logo": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Upload the workspace's logo (PNG, JPEG or WebP, at most 200 kB)
         * @description The body is the image file itself, with its media type as `Content-Type`: `image/png`, `image/jpeg` or `image/webp`, at most 204800 bytes (413 `PAYLOAD_TOO_LARGE` beyond, refused before it is read whole). It is checked by its content, not its name or declared type: a PNG (signature, IHDR first, IEND last), a JPEG (SOI … EOI) or a WebP (RIFF `WEBP` with a `VP8`, `VP8L` or `VP8X` chunk), whose type is the one declared. An SVG (whatever its name or declared type) or anything else is 422 `LOGO_NOT_ACCEPTED`, with `details.reason` (`svg`, `not_an_image`, `type_mismatch`); another `Content-Type` is 415 `LOGO_TYPE_UNSUPPORTED`. The logo replaces the previous one, which is no longer served. Audited (`workspace.branding_changed`, the logos by their hashes).
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        put: operations["putWorkspaceBrandingLogo"];
        post?: never;
        /**
         * Remove the workspace's logo
         * @description E-mails and pages show the display name alone; the logo is no longer served. Removing when there is none changes nothing (200). Audited when there was one (`workspace.branding_changed`).
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteWorkspaceBrandingLogo"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/workspace/slack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Uninstall the Slack app from the caller's workspace
         * @description Revokes the app's bot token at Slack (`auth.revoke`), then deletes the installation with
         *     its encrypted token and records `chat.uninstalled` (`reason: uninstalled_by_admin`). The
         *     bot stops answering in that Slack team at once; installing again
         *     (`GET /api/oauth/slack/install`) starts afresh. When Slack does not answer, nothing is
         *     deleted (502): try again. Nothing installed (any more) is 404 `NOT_FOUND`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteWorkspaceSlack"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invite-requests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Invite requests of the caller's workspace, newest first
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getInviteRequests"];
        put?: never;
        /**
         * Ask the admins to invite someone (a member, under the `request` invite policy)
         * @description For a member of a workspace whose invite policy is `request` (`GET /api/workspace`,
         *     `invitePolicy`): asks its admins to invite `email` with the role wanted. The admins decide
         *     as for a request made in Slack (`POST /api/invite-requests/{requestId}/approve`, `…/deny`,
         *     the console, Slack's buttons); the request lapses after 7 days. Asking for an address that
         *     already has a pending request answers that request (200) and makes no new one. A member
         *     may have `INVITE_REQUESTS_PER_MEMBER` pending requests (default 10), the cap of Slack's
         *     requests too. Under the `admins` and `members` policies, and for admins (who invite
         *     themselves), 403 `INVITE_NOT_ALLOWED` says what to do instead.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): an invite request is a person asking the admins; a key invites directly (`POST /api/users/invite`).
         */
        post: operations["postInviteRequests"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invite-requests/mine": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's own invite requests, newest first
         * @description The requests the signed-in member (or admin) made, in the console, REST or Slack, with
         *     what became of each (`status`; `reason` when denied). Any member; nobody else's requests.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it lists a person's own requests.
         */
        get: operations["getInviteRequestsMine"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invite-requests/{requestId}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5b0c7a1e-2f3d-4c5b-9a8e-7d6c5b4a3f21 */
                requestId: components["parameters"]["RequestId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve a pending invite request; the invitation is sent in the caller's name
         * @description Of concurrent decisions on one request exactly one succeeds; the others get 409
         *     `INVITE_REQUEST_NOT_PENDING`. When the invitation cannot be made (the person has
         *     joined, the e-mail budget is spent, the e-mail fails) the request stays pending.
         *     The invitation is for a `member` unless the body names the role: the role the
         *     requester asked for is never granted by an approval that does not name it.
         *     An API key also needs `members:admin` for approving as admin (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postInviteRequestsRequestIdApprove"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invite-requests/{requestId}/deny": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5b0c7a1e-2f3d-4c5b-9a8e-7d6c5b4a3f21 */
                requestId: components["parameters"]["RequestId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deny a pending invite request, with an optional reason the requester is told
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postInviteRequestsRequestIdDeny"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invite-links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Invite links of the caller's workspace, newest first (never their URL)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getInviteLinks"];
        put?: never;
        /**
         * Create a shareable invite link (the link is shown once)
         * @description A link anyone who has it may use to join the caller's workspace, always as a `member`:
         *     `{PUBLIC_URL}/join/{code}`. Each person proves their e-mail address first (the link's page
         *     e-mails them a confirmation link); `allowedDomains` is checked on that proven address.
         *     With `requiresApproval` a confirmed address becomes an invite request (the admins approve
         *     or deny it as any other); otherwise the person joins at once. Each confirmed address is one
         *     use; `maxUses` null is unlimited. The code carries 192 random bits and only its SHA-256 is
         *     kept: `url` is in this answer (and in `POST /api/invite-links/{linkId}/regenerate`'s) and
         *     never again.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postInviteLinks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invite-links/{linkId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 4d6f8a0c-1e3b-4c5d-8e7f-9a0b1c2d3e4f */
                linkId: components["parameters"]["LinkId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an invite link (its code and pending confirmations stop working at once)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteInviteLinksLinkId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invite-links/{linkId}/regenerate": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 4d6f8a0c-1e3b-4c5d-8e7f-9a0b1c2d3e4f */
                linkId: components["parameters"]["LinkId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A new code for an invite link (the old one stops working at once; the URL is shown once)
         * @description The link keeps its settings and its count of uses; its old code, and every confirmation
         *     e-mailed through it and not yet used, stop working in the same transaction.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postInviteLinksLinkIdRegenerate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/join/{code}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
                 * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
                 */
                code: components["parameters"]["JoinCode"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Ask to join through an invite link; a confirmation link is e-mailed to the address
         * @description Nothing is joined yet: the address must be proven by following the e-mailed link
         *     (`/join/{code}?confirm=…`, valid 24 hours, once), which calls
         *     `POST /api/join/{code}/confirm`. The same 202 whether or not the address already belongs to
         *     someone. An address outside the link's `allowedDomains` is refused (403
         *     `EMAIL_DOMAIN_NOT_ALLOWED`); it is checked again on the proven address.
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other
         *     public operations, default 30; 429 beyond) and per link (`INVITE_LINK_JOINS_PER_HOUR`
         *     requests an hour, default 60; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it belongs to a person's join flow.
         */
        post: operations["postJoinCode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/join/{code}/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
                 * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
                 */
                code: components["parameters"]["JoinCode"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Confirm an address e-mailed through an invite link, and join (or ask the admins)
         * @description The token from the e-mailed link proves the address. The link is used once more, counted
         *     atomically (of concurrent confirmations on a link with n uses left, exactly n succeed).
         *     Without approval the person joins with the link's role and is signed in (201, the session
         *     cookie); with `requiresApproval` an invite request is made for the admins (202), who
         *     approve it as any other (the invitation is then e-mailed). A link regenerated or revoked
         *     since the e-mail was sent refuses it (404).
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other
         *     public operations, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it signs a person in.
         */
        post: operations["postJoinCodeConfirm"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/join/{code}/confirm/preview": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
                 * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
                 */
                code: components["parameters"]["JoinCode"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Preview an invite link's e-mailed confirmation without using it
         * @description What `POST /api/join/{code}/confirm` would do with this token, without using it: the
         *     address it proves (without approval, the account it signs this browser in to), the
         *     workspace, whether the admins are asked instead (`requiresApproval`), and whether this
         *     browser is the one that asked to join (`sameBrowser`: the `login_link_browser` cookie that
         *     `POST /api/join/{code}` set matches the one stored with the confirmation). The page
         *     `/join/{code}?confirm=…` shows this and confirms only when the person clicks, with a
         *     warning when the confirmation was requested from another browser.
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other
         *     public operations, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it belongs to a person's join flow.
         */
        post: operations["postJoinCodeConfirmPreview"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/workspace": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's workspace (name, age, members, who may invite)
         * @description For any member (the session cookie) or an API key of the workspace. Cookie callers are
         *     not limited; an API key draws on its per-key REST budget (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`,
         *     shared by every REST operation open to keys). Limited per API key with 429 beyond.
         */
        get: operations["getWorkspace"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The signed-in user and their workspace
         * @description Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it answers who the signed-in person is; a key reads its workspace with `GET /api/workspace`.
         */
        get: operations["getUsersMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change the signed-in member's profile (their language)
         * @description The member's own `locale` (a BCP 47 tag): the e-mails the service writes them (sign-in
         *     links; an admin's notices) are in it; null goes back to the workspace's `locale`.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): each person chooses for themselves.
         */
        patch: operations["patchUsersMe"];
        trace?: never;
    };
    "/api/users/me/notifications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * How the signed-in admin hears of new invite requests
         * @description `inviteRequests`: `email`, `slack` (a direct message from the Slack app, when the workspace
         *     installed it and Slack knows the admin's address; the default) or `off`. Whichever the
         *     channel, an admin hears at most once an hour: the first request after a quiet hour at once,
         *     the requests that arrive within the hour after it in one digest when the hour ends.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): each admin chooses for themselves.
         */
        get: operations["getUsersMeNotifications"];
        /**
         * Choose how the signed-in admin hears of new invite requests
         * @description Replaces the admin's choice (see `GET /api/users/me/notifications`); other admins' choices
         *     are their own. Requests held for a digest are sent by the channel chosen when it is due.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): each admin chooses for themselves.
         */
        put: operations["putUsersMeNotifications"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Members of the caller's workspace
         * @description Oldest first, paged on the server. `q` keeps the members whose e-mail address or name begins
         *     with it (case-insensitive), `role` those of one role, `status` those active or those
         *     suspended; together they keep those matching all. Pass the same filters with `cursor` for
         *     the next page.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getUsers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users/invite": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Invite a user to the workspace
         * @description Sends an invitation e-mail to join the workspace of the authenticated user. When the
         *     identity provider's invitation mechanism is available the invitation is created through it
         *     (`invitationId` in the answer); otherwise the service sends its own e-mail with a signup
         *     link (`invitationUrl`). Re-inviting an e-mail with a pending invitation re-sends that
         *     invitation with a fresh link. An optional `Idempotency-Key` replays the first answer.
         *     Only this operation returns the signup link; the MCP tool `invite_user` and the chat bot
         *     invite the same way (their `role` defaults to `member`) but never hand the link out.
         *
         *     Invitation e-mails are limited per workspace (`INVITE_EMAILS_PER_HOUR`, default 100): one
         *     hourly budget shared by this operation, re-sends, the MCP tool `invite_user` and the chat
         *     bot. Requests refused before sending (400, 401, 403) and retries answered from their
         *     `Idempotency-Key` do not count.
         *
         *     Admins invite under every invite policy. A member invites as the workspace's invite policy
         *     (`GET /api/workspace`, `invitePolicy`) allows, as in Slack: under `members` a member may
         *     invite members (never admins); under `request` a member files an invite request instead
         *     (`POST /api/invite-requests`); under `admins` a member is refused. A refusal is 403
         *     `INVITE_NOT_ALLOWED`, its message saying why and what to do, `details.invitePolicy` the policy.
         *     An API key also needs `members:admin` for inviting an admin (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postUsersInvite"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        /**
         * A member of the workspace, by id
         * @description The member as the members list shows them (who invited them, who manages them). A removed
         *     member, or one of another workspace, is 404 `NOT_FOUND`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getUsersUserId"];
        put?: never;
        post?: never;
        /**
         * Remove a member from the workspace
         * @description Their sessions and the API keys they created stop working at once; the e-mail can be invited again.
         *     An API key also needs `members:admin` for removing an admin (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteUsersUserId"];
        options?: never;
        head?: never;
        /**
         * Change a member's role
         * @description An API key needs `members:admin` besides `members:write`: every role change makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        patch: operations["patchUsersUserId"];
        trace?: never;
    };
    "/api/users/{userId}/suspend": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Suspend a member (reversible; the role is kept)
         * @description At once, on every instance: the member's sessions are revoked, their API keys are refused,
         *     no sign-in link is sent to them (`POST /api/auth/login-link` answers as for an unknown
         *     address), every way in that sets the `service_session` cookie refuses them (links and
         *     tokens issued before included) and the chat bot answers them as a stranger. Their role and
         *     the invitations they sent are kept. Suspending a suspended member changes nothing. The last
         *     active admin cannot be suspended (`LAST_ADMIN`). Records `member.suspended`.
         *     An API key also needs `members:admin` for suspending an admin (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postUsersUserIdSuspend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users/{userId}/reactivate": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reactivate a suspended member (with the role they had)
         * @description The member may sign in again (their old sessions stay ended) and their API keys work
         *     again. Reactivating an active member changes nothing. Records `member.reactivated`.
         *     An API key also needs `members:admin` for reactivating an admin (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postUsersUserIdReactivate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invitations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Invitations of the caller's workspace, newest first
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getInvitations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invitations/funnel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's invitation funnel over a period
         * @description Of the invitations sent in the period (made in `[since, until)` and handed to the mail
         *     relay or the identity provider; never the ones nobody e-mailed, `deliveryStatus: not_sent`):
         *     how many were viewed (the signup page opened, `viewedAt`), accepted, expired without ever
         *     being viewed, and bounced. Counted now: an invitation sent in the period and accepted
         *     after it counts as accepted. `until` defaults to now, `since` to 30 days before `until`.
         *     One indexed statement, whatever the period (docs/performance.md).
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getInvitationsFunnel"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invitations/{invitationId}/resend": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
                invitationId: components["parameters"]["InvitationId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-send a pending invitation with a fresh link and expiry
         * @description An API key also needs `members:admin` for re-sending an admin's invitation (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postInvitationsInvitationIdResend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invitations/{invitationId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
                invitationId: components["parameters"]["InvitationId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke a pending invitation
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteInvitationsInvitationId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invitations/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Invite many people at once (up to 1,000)
         * @description Invites up to 1,000 e-mail addresses in one request, each in the batch's `role` (default
         *     `member`) or its own, and answers a result per row: `invited`, `resent` (a pending
         *     invitation is sent again), `already_member`, `invalid` (not an e-mail address),
         *     `duplicate` (the same address earlier in the batch) or `over_budget` (past the workspace's
         *     invitation-e-mail budget, `INVITE_EMAILS_PER_HOUR`: that row is not invited at all, and
         *     `retryAfter` says in how many seconds the budget has room again). A row is never half-sent:
         *     it is either invited with its e-mail queued, or reported as not invited.
         *
         *     Every invitation is written, with its `invitation.created` or `invitation.resent` event, in
         *     the request's transaction; the e-mails then go out through the job engine over a bounded
         *     number of SMTP connections (`SMTP_POOL_CONNECTIONS`), with retries. Each row's `delivery`
         *     follows its e-mail (`queued`, `sent`, `failed`, `cancelled` when the invitation was
         *     accepted or revoked before it left). A batch of at most 25 rows is answered `201` with all
         *     its rows; a larger one `202` with the batch's first page of rows and `Location`, where
         *     `GET /api/invitation-batches/{batchId}` shows its progress and pages through its rows.
         *
         *     An optional `Idempotency-Key` replays the first answer (the whole batch is one request:
         *     its rows are not invited twice). The MCP tool `invite_many` invites the same way.
         *     An API key also needs `members:admin` for a batch with an admin row (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postInvitationsBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/invitation-batches/{batchId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 9d2f6b1e-3c4a-4b5d-8e7f-0a1b2c3d4e5f */
                batchId: components["parameters"]["BatchId"];
            };
            cookie?: never;
        };
        /**
         * A batch of invitations, its progress and a page of its rows
         * @description The batch made by `POST /api/invitations/batch`: how many rows had each result, how many of
         *     its e-mails are `queued`, `sent`, `failed` or `cancelled`, whether it is `completed` (no
         *     e-mail left to send), and one page of its rows in the order they were sent. Pass
         *     `nextCursor` as `cursor` for the next page. A completed batch is kept for
         *     `RETENTION_BATCHES_DAYS` (default 30) after it completed, then deleted with its rows (404);
         *     the invitations it made stay.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getInvitationBatchesBatchId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's audit trail, newest first
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getAuditEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-events/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit trail as a file (NDJSON or CSV), oldest first
         * @description Every record the filters select (the list's own, a time range among them), oldest first, as
         *     `application/x-ndjson` (one `AuditEvent` per line, as the list shows it; the default) or
         *     `text/csv` (a header row, then `id,createdAt,action,actorType,actorId,actorLabel,source,targetType,targetId,payload`;
         *     every cell quoted; a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
         *     gets a leading `'` so a spreadsheet opens it as text; `payload` as JSON), by `Accept`.
         *     Dates are ISO 8601 in UTC. Streamed as the client reads it, in constant memory, whatever the
         *     range. A transfer that is cut resumes: ask again with the same query and `after` = the `id` of
         *     the last complete line received (a resumed CSV has no second header, so the parts concatenate).
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getAuditEventsExport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-events/signing-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The public keys that sign the audit trail's digests, retired ones included
         * @description The service's Ed25519 public keys (JWK, `kty` `OKP`, `crv` `Ed25519`), newest first. The
         *     newest key not retired signs the hourly digests; a key is replaced every 90 days and stays
         *     listed, with `retiredAt`, so every digest it signed still verifies. The private keys are
         *     sealed at rest and never leave the service. Save this answer as a file for
         *     `npm run audit:verify -- export.ndjson --digests digests.json --keys keys.json`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getAuditEventsSigningKeys"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-events/digests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's signed hourly digests of its audit chain, oldest first
         * @description At five past each hour the service signs, per workspace, the part of its audit chain that no
         *     digest covers yet up to the last record created before the hour's end: `hour` is the hour it
         *     closes; `firstSequence`…`lastSequence`, `firstId`, `lastId`, `count` and `lastHash` say which
         *     records; `previousDigestHash` is the previous digest's `digestHash` (null for the first), so
         *     the digests chain too. `digestHash` is SHA-256 (hex) and `signature` Ed25519 (base64url), both
         *     over the RFC 8785 canonical JSON of the other fields; `kid` names the key
         *     (`getAuditEventsSigningKeys`). An hour without records has no digest. `since` and `until`
         *     select hours.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getAuditEventsDigests"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * API keys of the workspace (never the secret)
         * @description Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): a key can never read other keys.
         */
        get: operations["getApiKeys"];
        put?: never;
        /**
         * Create an API key (the secret is shown once)
         * @description Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): a key can never make or widen a key.
         */
        post: operations["postApiKeys"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/api-keys/{apiKeyId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 9f8e7d6c-5b4a-4392-8170-6e5d4c3b2a19 */
                apiKeyId: components["parameters"]["ApiKeyId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API key (effective at once)
         * @description Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): keys are revoked by an admin in a session.
         */
        delete: operations["deleteApiKeysApiKeyId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's events as a pull feed (oldest first, 30 days)
         * @description The same events the webhooks deliver, oldest first. Start without `after` (the oldest
         *     event of the last 30 days), then pass the previous page's `nextCursor` as `after`; an
         *     empty page with a `nextCursor` means "nothing new yet, ask again with this cursor".
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhook-endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's webhook endpoints (never the secret)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getWebhookEndpoints"];
        put?: never;
        /**
         * Subscribe an endpoint to the workspace's events (the signing secret is shown once)
         * @description In staging and production the URL must be `https` and must not resolve to a loopback,
         *     private, link-local, CGNAT or metadata address (checked here and again on every
         *     connection); `APP_ENV=local` also allows `http` and loopback.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postWebhookEndpoints"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhook-endpoints/{endpointId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete an endpoint (its pending deliveries are dropped)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteWebhookEndpointsEndpointId"];
        options?: never;
        head?: never;
        /**
         * Change an endpoint's URL, event types, or enable / disable it
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        patch: operations["patchWebhookEndpointsEndpointId"];
        trace?: never;
    };
    "/api/webhook-endpoints/{endpointId}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A new signing secret (shown once); the old one keeps signing alongside for 24 h
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postWebhookEndpointsEndpointIdRotateSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhook-endpoints/{endpointId}/test": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a signed test event (`webhook.test`) to this endpoint alone
         * @description A `webhook.test` event goes to this endpoint only, whatever event types it subscribes to,
         *     through the normal delivery path: signed with its secret, retried on failure, listed in
         *     its deliveries. The event is not in the events feed (`GET /api/events`); the audit trail
         *     records `webhook_endpoint.tested`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postWebhookEndpointsEndpointIdTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhook-endpoints/{endpointId}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        /**
         * Deliveries to an endpoint, newest first (attempts, last status code, next attempt)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getWebhookEndpointsEndpointIdDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhook-deliveries/{deliveryId}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d */
                deliveryId: string;
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a delivery again now (same webhook-id)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postWebhookDeliveriesDeliveryIdRetry"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-streams": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's audit streams, with their last delivery and lag (never a token)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getAuditStreams"];
        put?: never;
        /**
         * Stream the audit trail to a SIEM (generic HTTPS, Splunk HEC or Datadog logs)
         * @description Every audit record recorded after this call is delivered to the receiver, in order, at
         *     least once, in batches (up to 500 records, or what a second gathers), each record a
         *     CloudEvents 1.0 envelope carrying its OCSF class and activity (docs/audit.md, "Streams").
         *     `https`: a JSON array of envelopes, signed as webhooks are (the secret is in this answer
         *     only); `splunk`: HTTP Event Collector events with `Authorization: Splunk <token>`;
         *     `datadog`: logs intake with `DD-API-KEY: <token>`. The URL follows the webhooks' address
         *     policy (400 `WEBHOOK_URL_NOT_ALLOWED`). The token is sealed at rest and never shown again.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postAuditStreams"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-streams/{streamId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        /**
         * One audit stream (never its token)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getAuditStreamsStreamId"];
        put?: never;
        post?: never;
        /**
         * Delete an audit stream (what it had not delivered is not sent)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteAuditStreamsStreamId"];
        options?: never;
        head?: never;
        /**
         * Rename an audit stream, or change its URL or token
         * @description A new URL passes the address policy first. Delivery continues from the same place.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        patch: operations["patchAuditStreamsStreamId"];
        trace?: never;
    };
    "/api/audit-streams/{streamId}/test": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send one test record to the receiver now and say what it answered
         * @description One record (`type` `com.workspace-service.audit.test`, not in the audit trail) goes to the
         *     receiver in the stream's own format, with its credential, once, not retried; the answer
         *     says whether the receiver accepted it. The cursor does not move. The audit trail records
         *     `audit_stream.tested`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postAuditStreamsStreamIdTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-streams/{streamId}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Pause an audit stream (records keep being recorded; nothing is sent)
         * @description Pausing a paused stream changes nothing (200). Recorded as `audit_stream.paused`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postAuditStreamsStreamIdPause"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit-streams/{streamId}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resume an audit stream from where it stopped
         * @description Delivery resumes after the last record the receiver acknowledged: what was recorded while
         *     the stream was paused is delivered too, in order. Resuming an active stream changes
         *     nothing (200). Recorded as `audit_stream.resumed`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postAuditStreamsStreamIdResume"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/domains": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's domains, in the order they were added (at most 50)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getDomains"];
        put?: never;
        /**
         * Add an e-mail domain to verify (the DNS TXT record to publish is in the answer)
         * @description The domain is normalized (lower case, a trailing dot dropped, an internationalized name
         *     converted to its ASCII `xn--` form) and starts `pending`. Publish the answer's
         *     `verification` record (`TXT` at `_workspace-verification.<domain>`, value
         *     `ws-verify=<token>`); the service looks for it every hour, and at once on
         *     `POST /api/domains/{domainId}/verify`. A domain still pending 30 days after it was added
         *     is `failed`. Refused: not a domain name, a consumer mail provider (gmail.com, outlook.com
         *     and the like: a maintained list), a reserved name (`localhost`, `.local`, `.test`, …),
         *     a public suffix (`co.uk`, `github.io`: the Public Suffix List, its private section
         *     included) (400 `DOMAIN_NOT_ALLOWED`); a domain the workspace has already (409 `DOMAIN_EXISTS`), one
         *     another workspace verified (409 `DOMAIN_CLAIMED`), more than 50 per workspace
         *     (409 `DOMAIN_LIMIT_REACHED`). The policy (default `off`) applies once the domain is verified.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postDomains"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/domains/{domainId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c */
                domainId: components["parameters"]["DomainId"];
            };
            cookie?: never;
        };
        /**
         * One domain, its state and the TXT record to publish
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getDomainsDomainId"];
        put?: never;
        post?: never;
        /**
         * Remove a domain (nobody joins through it any more; members stay)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteDomainsDomainId"];
        options?: never;
        head?: never;
        /**
         * Set who may join through the domain (off, suggest, auto_join)
         * @description `off`: nothing. `suggest`: a person who proves an address at the domain (a link e-mailed
         *     to it, asked for on `/login`) is offered to join, which makes an invite request the
         *     admins approve (`/api/invite-requests`). `auto_join`: that person joins as a member at
         *     once. It applies only while the domain is verified.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        patch: operations["patchDomainsDomainId"];
        trace?: never;
    };
    "/api/domains/{domainId}/verify": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c */
                domainId: components["parameters"]["DomainId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Look for the TXT record now
         * @description Looks up `_workspace-verification.<domain>` TXT now. Found: the domain is `verified`
         *     (a failed domain too). Not found, or DNS did not answer: it stays as it was, and
         *     `checkError` says why. A domain another workspace verified meanwhile is 409
         *     `DOMAIN_CLAIMED`.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postDomainsDomainIdVerify"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/domain-joins/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Preview a domain join link without using it
         * @description A person with no account who asks for a sign-in link (`POST /api/auth/login-link`) with
         *     an address at a domain a workspace verified, with the policy `suggest` or `auto_join`, is
         *     e-mailed a join link instead (`/domain-join?token=…`, valid for 15 minutes, once). This
         *     says what the link does (the address, the workspace's name, `policy`) without using it,
         *     and whether this browser is the one that asked for the link (`sameBrowser`, as for login
         *     links); the page joins only when the person confirms (`POST /api/domain-joins`), with a
         *     warning when the link was requested from another browser.
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it belongs to a person's join flow.
         */
        post: operations["postDomainJoinsPreview"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/domain-joins": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Use a domain join link (join, or ask to)
         * @description Uses the join link's token once. Under `auto_join` the person becomes a member of the
         *     workspace and is signed in (201, the session cookie, `member.joined` naming the domain).
         *     Under `suggest` an invite request is made for the admins to approve (202; the invitation
         *     e-mail follows their approval). A domain that was removed, is no longer verified or whose
         *     policy is now `off` makes the link invalid (400 `TOKEN_INVALID`); an address that has an
         *     account meanwhile is 409 `USER_EXISTS`.
         *     Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, default 30; 429 beyond).
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): it signs a person in.
         */
        post: operations["postDomainJoins"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sso/connections": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's single sign-on connections, oldest first (never a client secret)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getSsoConnections"];
        put?: never;
        /**
         * Add a single sign-on connection (OpenID Connect or SAML 2.0) to the company's identity provider
         * @description A connection signs people in through the company's own identity provider. `protocol`
         *     says which of `oidc` and `saml` carries its settings (the other is absent). `domains` are
         *     names of the workspace's **verified** domains (`/api/domains`) whose addresses it serves;
         *     a domain serves at most one connection. The answer carries what to paste into the
         *     provider: `oidc.redirectUri`, or `saml.spEntityId`, `saml.acsUrl` and `saml.spMetadataUrl`.
         *     The OIDC client secret is sealed at rest and never returned (`clientSecretSet`).
         *     Refused with 422: a domain that is not one of the workspace's verified domains
         *     (`SSO_DOMAIN_NOT_VERIFIED`); an issuer or metadata URL that is not https or reaches a
         *     private, loopback or metadata address (`SSO_URL_NOT_ALLOWED`; `APP_ENV=local` also allows
         *     http and loopback, and `SSO_ALLOWED_HOSTS` names hosts allowed on a private network); a
         *     multi-tenant Entra ID issuer (`/common/`, `/organizations/`, `/consumers/`, `{tenantid}`)
         *     or an Entra ID issuer without the `tenantId` it names (`SSO_ISSUER_NOT_ALLOWED`); a
         *     certificate that does not parse (`SSO_CERTIFICATE_INVALID`); a SAML metadata URL that,
         *     fetched once, fails, times out (5 s) or is not an IdP's metadata with an HTTP-Redirect
         *     sign-on endpoint (`SSO_METADATA_UNAVAILABLE`, saying which). A domain another connection
         *     serves is 409 `SSO_DOMAIN_TAKEN`.
         *     An API key also needs `members:admin` for a connection whose `defaultRole` is `admin` (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        post: operations["postSsoConnections"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sso/connections/{connectionId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        /**
         * One single sign-on connection and what to paste into the provider
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        get: operations["getSsoConnectionsConnectionId"];
        put?: never;
        post?: never;
        /**
         * Delete a connection (its domains sign in by e-mailed link again; members stay)
         * @description Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        delete: operations["deleteSsoConnectionsConnectionId"];
        options?: never;
        head?: never;
        /**
         * Change a connection (its protocol stays)
         * @description Changes the fields given; `domains` replaces the list. Settings go under the connection's
         *     own protocol (`oidc` or `saml`): within it, the fields given replace theirs (a new
         *     `clientSecret` replaces the sealed one; `idpCertificates` replaces the list, for a
         *     rotation list the old and the new certificate). The same refusals as on creation.
         *     An API key also needs `members:admin` to make `defaultRole` `admin` (`x-api-key-admin-scope`): anything that makes or unmakes an admin.
         *     Limited per API key (`API_KEY_REST_RATE_LIMIT_PER_MINUTE`, one budget for every REST operation open to keys; 429 beyond); session callers are not limited.
         */
        patch: operations["patchSsoConnectionsConnectionId"];
        trace?: never;
    };
    "/api/sso/connections/{connectionId}/saml/metadata": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        /**
         * The service provider's SAML metadata of one connection (its entity ID is this URL)
         * @description Public: the admin gives this URL (or the document) to the identity provider. It names the connection's ACS URL (HTTP-POST) and asks for signed assertions.
         */
        get: operations["getSsoConnectionsConnectionIdSamlMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sso/connections/{connectionId}/saml/acs": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * SAML assertion consumer service of one connection (HTTP-POST binding)
         * @description The identity provider's page posts the `SAMLResponse` here from its own site: this is the one state change taken from another site (no `CSRF_REJECTED`). It is bound to the browser that started the sign-in by a cookie scoped to this path (SameSite=None; Secure; HttpOnly: a SameSite=Lax cookie is not sent with a cross-site POST) and by `InResponseTo`, and its assertion must be signed by one of the connection's pinned certificates; an assertion is accepted once, on any instance. Who signs in is decided as at the OpenID Connect callback: every refusal is 403 `SSO_SIGN_IN_REFUSED` with a short `details.reason`, recorded in the audit trail (`sso.sign_in_refused`). Limited per client IP (`AUTH_RATE_LIMIT_PER_MINUTE` requests a minute, shared with the other public operations, default 30; 429 beyond).
         *     A person's browser navigating here (an `Accept` that prefers `text/html` to `application/json`) gets an answer that signs no one in as a page in words (`text/html`) with the same status: what to do next and the short code for support, never the provider's message; other clients get the JSON below, unchanged. A test sign-in's assertion is a page too.
         *     Not open to API keys (`x-api-key: never`; a request with one is 403 `API_KEY_NOT_ALLOWED`): a browser posts it.
         */
        post: operations["postSsoConnectionsConnectionIdSamlAcs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * No server-initiated event stream (always 405)
         * @description The streamable HTTP transport lets a client open a server-sent event stream with GET. This
         *     endpoint is stateless and has none: it answers 405 with `Allow: POST`, as the MCP
         *     specification asks (MCP clients treat that as "no stream"). Every other method that an
         *     operation here does not list, on any path, is 404 `NOT_FOUND`; HEAD is not answered.
         */
        get: operations["getMcp"];
        put?: never;
        /**
         * Model Context Protocol endpoint (streamable HTTP, stateless)
         * @description JSON-RPC 2.0 messages of the Model Context Protocol. Tools: `invite_user`, `invite_many`,
         *     `list_invitations`, `revoke_invitation`, `list_members`, `list_invite_requests`,
         *     `approve_invite_request`, `deny_invite_request`, `create_invite_link`,
         *     `list_invite_links`, `revoke_invite_link`, `list_domains`, `add_domain`,
         *     `verify_domain`. Limited to 100 messages per
         *     minute per API key (`API_KEY_RATE_LIMIT_PER_MINUTE`): a batch (protocol versions up to
         *     2025-03-26) counts once per message, and a batch larger than what is left of the minute
         *     is refused whole with 429. An empty batch is a JSON-RPC Invalid Request: 400
         *     `VALIDATION_FAILED` with `details.jsonrpc.code` -32600. Each tool takes its REST
         *     operation's body or parameters and answers its success body (`invite_many`: the batch of
         *     `POST /api/invitations/batch`), with two differences:
         *     `invite_user`'s `role` is optional (default `member`), and it never returns
         *     `invitationUrl` — the signup link is a credential that goes to the invitee by e-mail
         *     only, never into an assistant's context.
         */
        post: operations["postMcp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/scim/v2/ServiceProviderConfig": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What this SCIM service provider supports (RFC 7643 §5)
         * @description PATCH, filters (up to 100 results a page), sorting none, bulk none, ETags none; the one
         *     authentication scheme is the workspace's directory key (`Authorization: Bearer`).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["scimGetServiceProviderConfig"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/scim/v2/ResourceTypes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The resource types this service provides (User, Group)
         * @description A SCIM ListResponse of the two resource types, `User` and `Group`.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["scimGetResourceTypes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/scim/v2/Schemas": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The schemas of the resources (RFC 7643 §7)
         * @description A SCIM ListResponse of the User and Group schemas, with the attributes this service keeps.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["scimGetSchemas"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/scim/v2/Users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's members as SCIM Users, filtered and paged
         * @description Every member of the workspace, oldest first (a stable order), `count` at a time (at most
         *     100; more is read as 100) from `startIndex` (1-based). `filter` (RFC 7644 §3.4.2.2)
         *     compares `userName` (case-insensitively), `externalId`, `emails.value`, `displayName`,
         *     `id` and `active` with `eq`, `ne`, `co`, `sw`, `ew`, `pr`, combined with `and`, `or`,
         *     `not`; anything else is 400 `invalidFilter`. `attributes` / `excludedAttributes` choose
         *     what each resource carries (`id` and `schemas` always).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["scimListUsers"];
        put?: never;
        /**
         * Provision a member (the directory is the authority)
         * @description Makes an active member at once (role `member`; event `member.joined` from the door
         *     `directory`), with a welcome e-mail and a sign-in link only when the workspace's
         *     `directory.welcomeEmail` setting is on. The address is the primary (else the first) of
         *     `emails`, else `userName` when it is an address. A member of this workspace who already
         *     holds that address is linked to the directory instead (their `externalId` and `userName`
         *     set; 201 with that member), unless another directory identity holds them. A `userName`
         *     or `externalId` another member holds, or an address held outside this workspace, is 409
         *     `uniqueness`. `active: false` makes the member suspended.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        post: operations["scimCreateUser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/scim/v2/Users/{scimUserId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        /**
         * One member as a SCIM User
         * @description An id that is not a member of this workspace (another workspace's included) is 404.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["scimGetUser"];
        /**
         * Replace a member's directory attributes
         * @description Sets `userName`, `externalId`, the name and the address as given (what is left out is
         *     cleared where it may be); `active` suspends or reactivates. Changing `id` is 400
         *     `mutability`. The last active admin cannot be suspended (409, `LAST_ADMIN`'s rule).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        put: operations["scimReplaceUser"];
        post?: never;
        /**
         * Remove a member
         * @description Removes the member as `DELETE /api/users/{userId}` does (sessions and their API keys end;
         *     event `member.removed`). The last active admin is not removed (409).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        delete: operations["scimDeleteUser"];
        options?: never;
        head?: never;
        /**
         * Change some of a member's directory attributes (RFC 7644 §3.5.2)
         * @description Operations as Okta and Entra ID send them: with or without `path`, value filters in paths
         *     (`emails[type eq "work"].value`), `op` in any case (`Replace`), `"True"`/`"False"` for
         *     booleans, and a path-less `replace` whose value has dotted keys (`name.givenName`).
         *     `active` false suspends the member, true reactivates them. A path this service does not
         *     keep is ignored as RFC 7644 allows; a malformed one is 400 `invalidPath`.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        patch: operations["scimPatchUser"];
        trace?: never;
    };
    "/api/scim/v2/Groups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The directory's groups, filtered and paged
         * @description Groups oldest first, paged as `GET /scim/v2/Users` is; `filter` compares `displayName`
         *     (case-insensitively), `externalId` and `id`; `excludedAttributes=members` leaves the
         *     members out (Entra ID and Okta ask so).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["scimListGroups"];
        put?: never;
        /**
         * Create a group
         * @description A `displayName` another group of the workspace has (case-insensitively) is 409
         *     `uniqueness`; members must be members of this workspace (400 `invalidValue` otherwise).
         *     When its name is the workspace's `directory.adminGroup`, its directory-managed members
         *     become admins.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        post: operations["scimCreateGroup"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/scim/v2/Groups/{scimGroupId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        /**
         * One group
         * @description An id that is not a group of this workspace is 404.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["scimGetGroup"];
        /**
         * Replace a group's name and members
         * @description The members given become the group's members (roles follow when it is the admins' group;
         *     removing the last active admin this way is refused, 409).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        put: operations["scimReplaceGroup"];
        post?: never;
        /**
         * Delete a group
         * @description The members stay members; deleting the admins' group makes its directory-managed members
         *     members again (refused, 409, when that would leave no active admin).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        delete: operations["scimDeleteGroup"];
        options?: never;
        head?: never;
        /**
         * Rename a group, add and remove members
         * @description `add` of `members`, `remove` of `members[value eq "…"]` or of `members` with a value
         *     array, `replace` of `displayName` (with or without path), ops in any case.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        patch: operations["scimPatchGroup"];
        trace?: never;
    };
    "/scim/v2/ServiceProviderConfig": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What this SCIM service provider supports (RFC 7643 §5) (deprecated path: use /api/scim/v2, `scimGetServiceProviderConfig`)
         * @deprecated
         * @description PATCH, filters (up to 100 results a page), sorting none, bulk none, ETags none; the one
         *     authentication scheme is the workspace's directory key (`Authorization: Bearer`).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["getScimServiceProviderConfig"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/scim/v2/ResourceTypes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The resource types this service provides (User, Group) (deprecated path: use /api/scim/v2, `scimGetResourceTypes`)
         * @deprecated
         * @description A SCIM ListResponse of the two resource types, `User` and `Group`.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["getScimResourceTypes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/scim/v2/Schemas": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The schemas of the resources (RFC 7643 §7) (deprecated path: use /api/scim/v2, `scimGetSchemas`)
         * @deprecated
         * @description A SCIM ListResponse of the User and Group schemas, with the attributes this service keeps.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["getScimSchemas"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/scim/v2/Users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The workspace's members as SCIM Users, filtered and paged (deprecated path: use /api/scim/v2, `scimListUsers`)
         * @deprecated
         * @description Every member of the workspace, oldest first (a stable order), `count` at a time (at most
         *     100; more is read as 100) from `startIndex` (1-based). `filter` (RFC 7644 §3.4.2.2)
         *     compares `userName` (case-insensitively), `externalId`, `emails.value`, `displayName`,
         *     `id` and `active` with `eq`, `ne`, `co`, `sw`, `ew`, `pr`, combined with `and`, `or`,
         *     `not`; anything else is 400 `invalidFilter`. `attributes` / `excludedAttributes` choose
         *     what each resource carries (`id` and `schemas` always).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["getScimUsers"];
        put?: never;
        /**
         * Provision a member (the directory is the authority) (deprecated path: use /api/scim/v2, `scimCreateUser`)
         * @deprecated
         * @description Makes an active member at once (role `member`; event `member.joined` from the door
         *     `directory`), with a welcome e-mail and a sign-in link only when the workspace's
         *     `directory.welcomeEmail` setting is on. The address is the primary (else the first) of
         *     `emails`, else `userName` when it is an address. A member of this workspace who already
         *     holds that address is linked to the directory instead (their `externalId` and `userName`
         *     set; 201 with that member), unless another directory identity holds them. A `userName`
         *     or `externalId` another member holds, or an address held outside this workspace, is 409
         *     `uniqueness`. `active: false` makes the member suspended.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        post: operations["postScimUsers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/scim/v2/Users/{scimUserId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        /**
         * One member as a SCIM User (deprecated path: use /api/scim/v2, `scimGetUser`)
         * @deprecated
         * @description An id that is not a member of this workspace (another workspace's included) is 404.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["getScimUser"];
        /**
         * Replace a member's directory attributes (deprecated path: use /api/scim/v2, `scimReplaceUser`)
         * @deprecated
         * @description Sets `userName`, `externalId`, the name and the address as given (what is left out is
         *     cleared where it may be); `active` suspends or reactivates. Changing `id` is 400
         *     `mutability`. The last active admin cannot be suspended (409, `LAST_ADMIN`'s rule).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        put: operations["putScimUser"];
        post?: never;
        /**
         * Remove a member (deprecated path: use /api/scim/v2, `scimDeleteUser`)
         * @deprecated
         * @description Removes the member as `DELETE /api/users/{userId}` does (sessions and their API keys end;
         *     event `member.removed`). The last active admin is not removed (409).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        delete: operations["deleteScimUser"];
        options?: never;
        head?: never;
        /**
         * Change some of a member's directory attributes (RFC 7644 §3.5.2) (deprecated path: use /api/scim/v2, `scimPatchUser`)
         * @deprecated
         * @description Operations as Okta and Entra ID send them: with or without `path`, value filters in paths
         *     (`emails[type eq "work"].value`), `op` in any case (`Replace`), `"True"`/`"False"` for
         *     booleans, and a path-less `replace` whose value has dotted keys (`name.givenName`).
         *     `active` false suspends the member, true reactivates them. A path this service does not
         *     keep is ignored as RFC 7644 allows; a malformed one is 400 `invalidPath`.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        patch: operations["patchScimUser"];
        trace?: never;
    };
    "/scim/v2/Groups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The directory's groups, filtered and paged (deprecated path: use /api/scim/v2, `scimListGroups`)
         * @deprecated
         * @description Groups oldest first, paged as `GET /scim/v2/Users` is; `filter` compares `displayName`
         *     (case-insensitively), `externalId` and `id`; `excludedAttributes=members` leaves the
         *     members out (Entra ID and Okta ask so).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["getScimGroups"];
        put?: never;
        /**
         * Create a group (deprecated path: use /api/scim/v2, `scimCreateGroup`)
         * @deprecated
         * @description A `displayName` another group of the workspace has (case-insensitively) is 409
         *     `uniqueness`; members must be members of this workspace (400 `invalidValue` otherwise).
         *     When its name is the workspace's `directory.adminGroup`, its directory-managed members
         *     become admins.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        post: operations["postScimGroups"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/scim/v2/Groups/{scimGroupId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        /**
         * One group (deprecated path: use /api/scim/v2, `scimGetGroup`)
         * @deprecated
         * @description An id that is not a group of this workspace is 404.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        get: operations["getScimGroup"];
        /**
         * Replace a group's name and members (deprecated path: use /api/scim/v2, `scimReplaceGroup`)
         * @deprecated
         * @description The members given become the group's members (roles follow when it is the admins' group;
         *     removing the last active admin this way is refused, 409).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        put: operations["putScimGroup"];
        post?: never;
        /**
         * Delete a group (deprecated path: use /api/scim/v2, `scimDeleteGroup`)
         * @deprecated
         * @description The members stay members; deleting the admins' group makes its directory-managed members
         *     members again (refused, 409, when that would leave no active admin).
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        delete: operations["deleteScimGroup"];
        options?: never;
        head?: never;
        /**
         * Rename a group, add and remove members (deprecated path: use /api/scim/v2, `scimPatchGroup`)
         * @deprecated
         * @description `add` of `members`, `remove` of `members[value eq "…"]` or of `members` with a value
         *     array, `replace` of `displayName` (with or without path), ops in any case.
         *     Limited per API key (`API_KEY_SCIM_RATE_LIMIT_PER_MINUTE`, one budget for every SCIM operation, apart from the REST one; 429 beyond).
         */
        patch: operations["patchScimGroup"];
        trace?: never;
    };
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The admin console's first screen (who is signed in; sign-in links when nobody is)
         * @description The console is one page whose scripts (`/static/console.<hash>.js`: a shell, and a chunk
         *     per screen loaded when it opens) draw each screen from the operations of this contract,
         *     as any client would; `/console/{screen}` opens a screen
         *     directly. Admins see every screen, members their profile.
         */
        get: operations["getIndexPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The admin console's first screen, at the console's own path (the same page as `/`)
         * @description The route table lists `/console` as a name of the first screen (an admin's overview, a
         *     member's profile): the console's page, as `/` answers it.
         */
        get: operations["getConsoleHome"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/signup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Invitation preview and acceptance page */
        get: operations["getSignupPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Login page (asks for the e-mail; also completes login links) */
        get: operations["getLoginPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/setup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * First-run page (workspace name, e-mail, name), opened from the link the service logs
         * @description While no workspace exists it shows the form that calls `POST /api/setup`; afterwards it says the service is set up and links to `/login`.
         */
        get: operations["getSetupPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/join/{code}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An invite link's page (names the workspace, asks for an e-mail and a name; also confirms)
         * @description Opening it changes nothing (mail and chat scanners open links): it shows the workspace's
         *     name and a form that calls `POST /api/join/{code}`; with `?confirm=…` (the e-mailed link)
         *     a button that calls `POST /api/join/{code}/confirm`. A code that is unknown, revoked or
         *     regenerated is a page saying so with 404; an expired or used-up link one with 410.
         */
        get: operations["getJoinPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/domain-join": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Domain join page (says what the join link does; joins only when the person confirms) */
        get: operations["getDomainJoinPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/{screen}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A screen of the admin console (the same page as `/`, opened on that screen)
         * @description The screens: `members`, `invitations`, `invite-links`, `requests`, `api-keys`, `webhooks`,
         *     `activity`, `settings`, `domains`, `directory`, `sso`, `profile`; the API's names answer too, as aliases (`users`,
         *     `invite-requests`, `webhook-endpoints`, `audit-events`, `workspace`, `me`, `overview`, `sso-connections`). Any
         *     other name is the console's own not-found screen (404, the same page, with links to every
         *     screen).
         */
        get: operations["getConsolePage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/branding/logos/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A workspace's logo, under its content's hash (cached for good)
         * @description The logo e-mails and pages before sign-in show (`WorkspaceBranding.logo.url`), named by the SHA-256 of its bytes: a name never changes its content, so it is cached for a year and never revalidated (`Cache-Control: public, max-age=31536000, immutable`); a new logo is a new name. `Content-Type` is the type its content was checked to be, with `X-Content-Type-Options: nosniff`. A logo replaced or removed is no longer served (404).
         */
        get: operations["getBrandingLogo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/favicon.svg": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The pages' icon */
        get: operations["getFavicon"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/assets/{script}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A script of the pages above (static; runs only under the page's CSP nonce) */
        get: operations["getPageScript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/static/{asset}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The admin console's script or styles, under a content-hashed name (cached for good)
         * @description The console page names its scripts (the shell, and a chunk per screen, loaded as the screen opens) and its styles by their content (`console.<hash>.js`, `console.<hash>.css`): a name never changes its content, so the answer is cached for a year and never revalidated (`Cache-Control: public, max-age=31536000, immutable`), and a new build is new names. Compressed ahead of time: brotli or gzip as `Accept-Encoding` allows (brotli first), the file itself otherwise; `Vary: Accept-Encoding`.
         */
        get: operations["getHashedAsset"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "invitation.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.created
         * @description An invitation was created (REST, MCP or the chat bot). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.resent": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.resent
         * @description A pending invitation was sent again (fresh link, new expiry). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationResent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.accepted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.accepted
         * @description The invited person signed up; see also member.joined. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationAccepted"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.revoked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.revoked
         * @description An admin revoked a pending invitation (or the identity provider said the person exists: reason). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationRevoked"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.expired": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.expired
         * @description A pending invitation reached its expiry (a scheduled job, at expiry time). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationExpired"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.delivery_failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.delivery_failed
         * @description The invitation e-mail could not be sent; the invitation is kept. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationDeliveryFailed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.viewed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.viewed
         * @description The invitee opened the signup page for the first time (the page's preview request: a link scanner fetching the link does not count); later opens send nothing. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationViewed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.bounced": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.bounced
         * @description The invitation e-mail bounced: the relay took it, then the recipient's mail server refused it for good (a delivery status notification, or the e-mail provider's webhook). `reason` is that server's answer. A temporary failure is no event. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationBounced"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invitation.reminder_sent": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invitation.reminder_sent
         * @description A pending invitation got its one reminder e-mail, with the link it already had (the workspace's `invitationReminderDays` before its expiry). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInvitationReminderSent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "member.joined": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * member.joined
         * @description A person joined the workspace: the door is in `data`, `invitationId` (an invitation accepted), `inviteLinkId` (an invite link, the address proven) or `domainId` and `domain` (a verified domain under `auto_join`, the address proven). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookMemberJoined"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invite_link.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invite_link.created
         * @description An admin created a shareable invite link (never its code or URL). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInviteLinkCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invite_link.regenerated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invite_link.regenerated
         * @description An admin gave an invite link a new code; the old one stopped working. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInviteLinkRegenerated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invite_link.revoked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invite_link.revoked
         * @description An admin revoked an invite link. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInviteLinkRevoked"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "domain.added": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * domain.added
         * @description An admin added an e-mail domain to verify (pending). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookDomainAdded"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "domain.verified": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * domain.verified
         * @description The domain's TXT record was found (an admin's re-check or the hourly job): people at it may join as its policy says. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookDomainVerified"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "domain.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * domain.failed
         * @description The domain was pending for 30 days without its TXT record: failed (an admin may re-check it). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookDomainFailed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "domain.removed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * domain.removed
         * @description An admin removed a domain; nobody joins through it any more (members stay). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookDomainRemoved"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "member.role_changed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * member.role_changed
         * @description An admin changed a member's role. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookMemberRoleChanged"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "member.suspended": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * member.suspended
         * @description An admin (or the company directory) suspended a member: their sessions are revoked, their API keys refused and no sign-in link is sent until they are reactivated; their role and the invitations they sent are kept. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookMemberSuspended"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "member.reactivated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * member.reactivated
         * @description An admin (or the company directory) reactivated a suspended member, with the role they had; their API keys work again. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookMemberReactivated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "member.removed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * member.removed
         * @description An admin removed a member (sessions and keys revoked). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookMemberRemoved"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "api_key.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * api_key.created
         * @description An API key was created (never the secret). Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookApiKeyCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "api_key.revoked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * api_key.revoked
         * @description An API key was revoked. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookApiKeyRevoked"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "chat.installed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * chat.installed
         * @description The Slack app was installed in the workspace. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookChatInstalled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "chat.uninstalled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * chat.uninstalled
         * @description The Slack app was uninstalled or its tokens revoked. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookChatUninstalled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invite_request.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invite_request.created
         * @description Someone asked for an invitation: a member (the console, REST or Slack, under the `request` invite policy), or a person joining through an invite link that needs an admin's approval (`inviteLinkId`). `role` is the role asked for. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInviteRequestCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invite_request.approved": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invite_request.approved
         * @description An admin approved an invite request; the invitation (its own `invitation.created` or `invitation.resent`) was sent in their name with `role`. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInviteRequestApproved"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invite_request.denied": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * invite_request.denied
         * @description An admin denied an invite request; `reason` is present when they gave one. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookInviteRequestDenied"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "webhook.test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * webhook.test
         * @description A test an admin sent to this endpoint alone (`POST /api/webhook-endpoints/{endpointId}/test`); it is in no feed and changes nothing. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookWebhookTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sso.certificate_expiring": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * sso.certificate_expiring
         * @description The last of a SAML connection's pinned signing certificates to expire does so within 30 days (told again at 7 days and when it has expired): add the identity provider's new certificate to the connection before the provider signs with it, or sign-in through it stops. Told once per certificate and stage; the workspace's admins get an e-mail too. Signed as Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp`, `webhook-signature`.
         */
        post: operations["webhookSsoCertificateExpiring"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description A SCIM error (RFC 7644 §3.12); every error answer under `/api/scim/v2` (and `/scim/v2`) is one. */
        ScimError: {
            schemas: "urn:ietf:params:scim:api:messages:2.0:Error"[];
            /** @description The HTTP status, as a string. */
            status: string;
            /** @enum {string} */
            scimType?: "invalidFilter" | "tooMany" | "uniqueness" | "mutability" | "invalidSyntax" | "invalidPath" | "noTarget" | "invalidValue" | "invalidVers" | "sensitive";
            detail?: string;
        };
        ScimMeta: {
            resourceType?: string;
            /** Format: date-time */
            created?: string;
            /** Format: date-time */
            lastModified?: string;
            /** Format: uri */
            location?: string;
        };
        ScimName: {
            givenName?: string;
            familyName?: string;
            formatted?: string;
        };
        /** @description A member as a SCIM User (RFC 7643 §4.1). `userName` is the directory's name for them, else their address. */
        ScimUser: {
            schemas: string[];
            /** Format: uuid */
            id: string;
            externalId?: string;
            userName?: string;
            name?: components["schemas"]["ScimName"];
            displayName?: string;
            emails?: {
                value: string;
                type?: string;
                primary?: boolean;
            }[];
            /** @description false: the member is suspended. */
            active?: boolean;
            groups?: {
                /** Format: uuid */
                value: string;
                display?: string;
            }[];
            meta?: components["schemas"]["ScimMeta"];
        };
        /** @description A boolean, or Entra ID's `"True"` / `"False"`. */
        ScimBoolean: boolean | ("True" | "False" | "true" | "false");
        /** @description A User as Okta and Entra ID send it. Attributes this service does not keep (`locale`, `phoneNumbers`, the enterprise extension …) are accepted and ignored. */
        ScimUserInput: {
            schemas?: string[];
            id?: string;
            externalId?: string;
            userName: string;
            displayName?: string;
            name?: {
                givenName?: string;
                familyName?: string;
                formatted?: string;
            } & {
                [key: string]: unknown;
            };
            emails?: ({
                value?: string;
                type?: string;
                primary?: components["schemas"]["ScimBoolean"];
            } & {
                [key: string]: unknown;
            })[];
            active?: components["schemas"]["ScimBoolean"];
        } & {
            [key: string]: unknown;
        };
        /** @description A SCIM PatchOp (RFC 7644 §3.5.2), `op` in any case. */
        ScimPatchRequest: {
            schemas?: string[];
            Operations: ({
                /** @enum {string} */
                op: "add" | "remove" | "replace" | "Add" | "Remove" | "Replace" | "ADD" | "REMOVE" | "REPLACE";
                path?: string;
                value?: unknown;
            } & {
                [key: string]: unknown;
            })[];
        } & {
            [key: string]: unknown;
        };
        ScimUserList: {
            schemas: string[];
            totalResults: number;
            startIndex: number;
            itemsPerPage: number;
            Resources: components["schemas"]["ScimUser"][];
        };
        ScimGroup: {
            schemas: string[];
            /** Format: uuid */
            id: string;
            externalId?: string;
            displayName?: string;
            members?: {
                /** Format: uuid */
                value: string;
                display?: string;
            }[];
            meta?: components["schemas"]["ScimMeta"];
        };
        ScimGroupInput: {
            schemas?: string[];
            id?: string;
            externalId?: string;
            displayName: string;
            members?: ({
                value: string;
                display?: string;
            } & {
                [key: string]: unknown;
            })[];
        } & {
            [key: string]: unknown;
        };
        ScimGroupList: {
            schemas: string[];
            totalResults: number;
            startIndex: number;
            itemsPerPage: number;
            Resources: components["schemas"]["ScimGroup"][];
        };
        ScimServiceProviderConfig: {
            schemas: string[];
            patch: {
                [key: string]: unknown;
            };
            bulk: {
                [key: string]: unknown;
            };
            filter: {
                [key: string]: unknown;
            };
            changePassword: {
                [key: string]: unknown;
            };
            sort: {
                [key: string]: unknown;
            };
            etag: {
                [key: string]: unknown;
            };
            authenticationSchemes: {
                [key: string]: unknown;
            }[];
            meta?: components["schemas"]["ScimMeta"];
        } & {
            [key: string]: unknown;
        };
        /** @description A ListResponse of ResourceType or Schema definitions (RFC 7643 §6, §7). */
        ScimDefinitionList: {
            schemas: string[];
            totalResults: number;
            startIndex: number;
            itemsPerPage: number;
            Resources: {
                [key: string]: unknown;
            }[];
        };
        /**
         * @description A BCP 47 language tag (`en`, `de-CH`, `ja`, `ar`), not a closed list: a language the service does not write yet is kept as given and read in the next best one (its base language, else the workspace's, else English); adding a language is no contract change.
         * @example ja
         */
        LanguageTag: string;
        InviteUserRequest: {
            /**
             * Format: email
             * @description Address of the user to invite (compared case-insensitively). Exactly what `format email` accepts; surrounding spaces are not part of an address and are refused.
             */
            email: string;
            /**
             * @description Role assigned to the invited user. Required; `member` is what a client should send when in doubt (the default documents that, the service does not fill it in).
             * @default member
             * @enum {string}
             */
            role: "admin" | "member";
            /** @description The invitee's language (a BCP 47 tag such as `ja` or `de-CH`); the invitation e-mail, its re-sends and its reminder are written in it. Absent, the workspace's `locale`; a language the service does not write falls back the same way. */
            locale?: components["schemas"]["LanguageTag"];
        };
        InviteUserResponse: {
            /** @description Outcome flag. */
            success: boolean;
            /**
             * @description What happened, for programs: `invited` — a new invitation was made and sent; `resent` — a pending invitation of that address in the workspace was sent again (same id, a fresh link: the old one stops working, a new expiry). Decide from this field, never from `message`.
             * @enum {string}
             */
            outcome: "invited" | "resent";
            /** @description Human-readable text, for people; its wording may change in any release. */
            message: string;
            /** @description Identifier of the invitation at the identity provider; present only when the identity-provider path was used. */
            invitationId?: string;
            /**
             * Format: uri
             * @description Direct signup URL; returned by the fallback path.
             */
            invitationUrl?: string;
        };
        ErrorResponse: {
            /** @description Human-readable error message. */
            message: string;
            /** @description Machine-readable error code (upper-case). The codes this version produces are listed by `ErrorCode`; clients should accept unknown codes too. */
            code?: components["schemas"]["ErrorCode"] | string;
            /**
             * @description Additional error context. On a 400 `VALIDATION_FAILED`, `errors` lists every failing
             *     value as `{in, field, message}`: `in` is where it is — `path`, `query` or `header` (as
             *     a parameter's `in` in this contract) or `body` (the JSON body, or an MCP tool's
             *     arguments: `arguments`); `field` is the parameter name (header names in lower case) or
             *     the dotted path in the body (`''` for the whole body).
             */
            details?: {
                [key: string]: unknown;
            };
        };
        /**
         * @description Every value of `ErrorResponse.code` this service produces.
         * @enum {string}
         */
        ErrorCode: "VALIDATION_FAILED" | "INVALID_JSON" | "TOKEN_INVALID" | "OAUTH_STATE_INVALID" | "UNAUTHENTICATED" | "SIGNATURE_INVALID" | "FORBIDDEN" | "NOT_FOUND" | "IDENTITY_PROVIDER_NOT_CONFIGURED" | "CHAT_PLATFORM_NOT_CONFIGURED" | "METHOD_NOT_ALLOWED" | "NOT_ACCEPTABLE" | "USER_EXISTS" | "LAST_ADMIN" | "SCIM_INVALID_FILTER" | "SCIM_INVALID_PATH" | "SCIM_MUTABILITY" | "SCIM_UNIQUENESS" | "INVITATION_NOT_PENDING" | "INVITE_REQUEST_NOT_PENDING" | "INVITE_REQUEST_LIMIT_REACHED" | "INVITE_NOT_ALLOWED" | "IDEMPOTENCY_KEY_IN_USE" | "API_KEY_LIMIT_REACHED" | "TOKEN_EXPIRED" | "TOKEN_USED" | "SETUP_COMPLETE" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "LOGO_TYPE_UNSUPPORTED" | "LOGO_NOT_ACCEPTED" | "ACCENT_COLOR_CONTRAST_TOO_LOW" | "IDEMPOTENCY_KEY_REUSED" | "RATE_LIMITED" | "INTERNAL_ERROR" | "EMAIL_SEND_FAILED" | "UPSTREAM_FAILED" | "SERVICE_UNAVAILABLE" | "WEBHOOK_URL_NOT_ALLOWED" | "WEBHOOK_ENDPOINT_DISABLED" | "CSRF_REJECTED" | "EMAIL_DOMAIN_NOT_ALLOWED" | "DOMAIN_NOT_ALLOWED" | "DOMAIN_EXISTS" | "DOMAIN_CLAIMED" | "DOMAIN_LIMIT_REACHED" | "INSUFFICIENT_SCOPE" | "API_KEY_NOT_ALLOWED" | "MEMBER_SUSPENDED" | "MANAGED_BY_DIRECTORY" | "SSO_DOMAIN_NOT_VERIFIED" | "SSO_DOMAIN_TAKEN" | "SSO_URL_NOT_ALLOWED" | "SSO_ISSUER_NOT_ALLOWED" | "SSO_CERTIFICATE_INVALID" | "SSO_METADATA_UNAVAILABLE" | "SSO_REQUIRED" | "SSO_CONNECTION_NOT_FOUND" | "SSO_SIGN_IN_REFUSED";
        Health: {
            /** @enum {string} */
            status: "ok" | "unavailable";
            /** @description The service version (package.json). */
            version: string;
            checks: components["schemas"]["HealthChecks"];
        };
        HealthChecks: {
            database: {
                /** @enum {string} */
                status: "ok" | "unavailable";
                /** @enum {string} */
                kind?: "pglite" | "postgres";
                /** @description Duration of the ping this answer is based on. */
                latencyMs?: number;
            };
            /** @description Present when load shedding is on (`LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS`). */
            eventLoop?: {
                /** @enum {string} */
                status: "ok" | "overloaded";
                /** @description Mean event-loop delay over the last sample interval. */
                delayMs: number;
            };
            /** @description Present while this instance drains before a planned stop (`SHUTDOWN_DRAIN_MS`): the answer is 503 so a load balancer routes elsewhere, though the database is up. */
            instance?: {
                /** @enum {string} */
                status: "draining";
            };
            /** @description Present when a mail relay is configured (`SMTP_URL`): the relay as last seen — checked at start, then by every send, never by this check. `unknown` until the first of those answers. A relay that is down does not make this operation 503: invitations fail with `EMAIL_SEND_FAILED`, everything else is served. */
            mail?: {
                /** @enum {string} */
                status: "ok" | "unavailable" | "unknown";
                /**
                 * Format: date-time
                 * @description When the relay entered this state.
                 */
                since: string;
            };
        };
        HealthUnavailable: {
            message: string;
            code: string;
            details?: {
                [key: string]: unknown;
            };
            /** @enum {string} */
            status: "ok" | "unavailable";
            version: string;
            checks: components["schemas"]["HealthChecks"];
        };
        /** @enum {string} */
        Role: "admin" | "member";
        Workspace: {
            /** Format: uuid */
            id: string;
            name: string;
        };
        WorkspaceSummary: {
            /** Format: uuid */
            id: string;
            name: string;
            /** Format: date-time */
            createdAt: string;
            /** @description The members GET /api/users lists: admins and disabled accounts included, removed ones not. */
            memberCount: number;
            invitePolicy: components["schemas"]["InvitePolicy"];
        };
        User: {
            /** Format: uuid */
            id: string;
            email: string;
            name: string | null;
            role: components["schemas"]["Role"];
            status: components["schemas"]["MemberStatus"];
            /** Format: date-time */
            createdAt: string;
            /** @description Who manages the member's status besides the workspace's admins: `directory`, a company directory provisioned or linked them over SCIM (it suspends and reactivates them); null for none. Open: a kind added since may appear. Present on every member from 2.1. */
            managedBy?: ("directory" | null) | string;
            /** @description Who suspended a suspended member: `admin` (a session or a key) or `directory` (their company directory deactivated them; only the directory reactivates them: 403 `MANAGED_BY_DIRECTORY` for an admin); null for an active member, or one suspended before 2.1. Open. Present on every member from 2.1. */
            suspendedBy?: ("admin" | "directory" | null) | string;
            /**
             * @description In the members list (`GET /api/users`) and a member read by id only: who sent the invitation this member
             *     accepted, and through which door; null for a member who joined otherwise (the first
             *     admin, single sign-on, their company's directory).
             */
            invitedBy?: {
                /** @description What kind of inviter (an `AuditActorType`, or a kind added since; open). */
                type: components["schemas"]["AuditActorType"] | string;
                /** @description What to call the inviter: a person's name (their e-mail when they gave none), an API key's name ("HR import"), or what the service acted as (`setup`). */
                name: string;
                /** @description A person's e-mail (`user`, `chat_platform`); null for an API key or the service itself. */
                email: string | null;
                /** @description The door the invitation came through (a `Source`, or a door added since; open). */
                source: components["schemas"]["Source"] | string;
            } | null;
        };
        /**
         * @description The door an action came through. `directory`: a company directory through SCIM
         *     (`/api/scim/v2`); `web`: the browser (the console, signup, login links, the Slack install);
         *     `mcp`: an API key on the MCP endpoint; `chat`: the Slack bot; `system`: the service itself
         *     (expiry, deliveries, an identity provider's answer); `api`: an API key on the REST API.
         *     A catalogue that grows: responses take it open (any other string), inputs take these.
         * @enum {string}
         */
        Source: "api" | "mcp" | "chat" | "web" | "system" | "directory";
        /**
         * @description Who acted, in the audit trail: a person's session (`user`), an API key (`api_key`), the
         *     service itself (`system`), the chat bot acting for a person (`chat_platform`). A catalogue
         *     that grows: responses take it open (any other string).
         * @enum {string}
         */
        AuditActorType: "user" | "api_key" | "system" | "chat_platform";
        /**
         * @description `suspended`: the member cannot sign in (no session, sign-in link, join or single sign-on
         *     lets them in; their sessions were revoked when suspended), their API keys are refused and
         *     the chat bot answers them as a stranger, until an admin reactivates them. The role and
         *     the invitations they sent are kept.
         * @enum {string}
         */
        MemberStatus: "active" | "suspended";
        Me: {
            user: components["schemas"]["User"];
            workspace: components["schemas"]["Workspace"];
            /** @description The member's own language (BCP 47), set with `PATCH /api/users/me`; null, the workspace's `locale`. */
            locale?: string | null;
        };
        MeUpdate: {
            /** @description A BCP 47 language tag (`ja`, `de-CH`) for the e-mails the service writes this member; null, the workspace's `locale`. */
            locale: string | null;
        };
        /** @description How an admin hears of new invite requests; at most once an hour, a digest after that. */
        NotificationSettings: {
            /**
             * @description `email`, `slack` (a direct message from the Slack app) or `off`. Read back as the channel in use: `slack` only while the workspace has Slack installed (`email` otherwise, whatever was chosen); an admin who never chose hears in Slack where it is installed, by e-mail elsewhere.
             * @enum {string}
             */
            inviteRequests: "email" | "slack" | "off";
        };
        UserList: {
            items: components["schemas"]["User"][];
            nextCursor: string | null;
        };
        UpdateUserRequest: {
            role: components["schemas"]["Role"];
        };
        TokenRequest: {
            token: string;
        };
        SignupRequest: {
            token: string;
            name?: string;
        };
        SetupRequest: {
            /** @description The token of the setup link the service logged. */
            token: string;
            /** @description The new workspace's name (surrounding spaces are dropped). */
            workspaceName: string;
            /**
             * Format: email
             * @description The first admin's e-mail (compared case-insensitively, as everywhere).
             */
            email: string;
            /** @description The first admin's display name. */
            name?: string;
        };
        LoginLinkRequest: {
            /** Format: email */
            email: string;
            /** @description Break-glass (false when absent), for an address at a domain that requires single sign-on: instead of `SSO_REQUIRED`, answer 202 as for any address and e-mail the link only if the address is a workspace admin's (its use is recorded as `sso.break_glass_sign_in`). Changes nothing for other addresses. */
            breakGlass?: boolean;
        };
        Accepted: {
            message: string;
        };
        JoinConfirmationPreview: {
            /** @description The address the confirmation proves: without approval, the account a confirmation signs in to. */
            email: string;
            workspace: components["schemas"]["Workspace"];
            /** @description True: confirming asks the admins instead of joining (nobody is signed in). */
            requiresApproval: boolean;
            /** Format: date-time */
            expiresAt: string;
            /** @description True when this browser asked to join (its `login_link_browser` cookie matches the one `POST /api/join/{code}` set). False for a confirmation opened in another browser, or one someone else sent: the page then says so before offering to confirm. */
            sameBrowser: boolean;
        };
        LoginLinkPreview: {
            /** @description The account the link signs in to. */
            email: string;
            workspace: components["schemas"]["Workspace"];
            /** Format: date-time */
            expiresAt: string;
            /** @description True when this browser asked for the link (its `login_link_browser` cookie matches). False for a link opened in another browser or on another device, or one that someone else may have sent: the page then says so before offering to sign in. */
            sameBrowser: boolean;
        };
        InvitationPreview: {
            workspace: components["schemas"]["Workspace"];
            email: string;
            role: components["schemas"]["Role"];
            /** Format: date-time */
            expiresAt: string;
            /** @description Name or e-mail of the inviting admin. */
            invitedBy?: string | null;
        };
        /** @enum {string} */
        InvitationStatus: "pending" | "accepted" | "revoked" | "expired";
        Invitation: {
            /** Format: uuid */
            id: string;
            email: string;
            role: components["schemas"]["Role"];
            status: components["schemas"]["InvitationStatus"];
            /**
             * @description How the invitation reached (or failed to reach) the invitee. `pending`: being sent now;
             *     `sent`: our mail relay took the e-mail (delivered to the relay, not yet known to be read);
             *     `failed`: the relay refused it or did not answer (`deliveryError` says why);
             *     `identity_provider`: the identity provider sent its own invitation; `not_sent`: never
             *     e-mailed and never will be (the first admin's own invitation from the setup page, or a
             *     `npm run create-admin` link printed without a mail relay); `bounced`: the relay took
             *     the e-mail, then the recipient's mail server refused it for good (a delivery status
             *     notification to the invitation's return path, or the e-mail provider's webhook;
             *     `bouncedAt` and `bounceReason` say when and why). A re-send starts over.
             * @example bounced
             * @enum {string}
             */
            deliveryStatus: "pending" | "sent" | "failed" | "identity_provider" | "not_sent" | "bounced";
            identityProviderInvitationId?: string | null;
            /** Format: uuid */
            invitedBy?: string | null;
            /** @description In the invitations list (`GET /api/invitations`) only: who sent it and through which door. */
            inviter?: {
                /** @description What kind of inviter (an `AuditActorType`, or a kind added since; open). */
                type: components["schemas"]["AuditActorType"] | string;
                /** @description What to call the inviter: a person's name (their e-mail when they gave none), an API key's name ("HR import"), or what the service acted as (`setup`). */
                name: string;
                /** @description A person's e-mail (`user`, `chat_platform`); null for an API key or the service itself. */
                email: string | null;
                /** @description The door the invitation came through (a `Source`, or a door added since; open). */
                source: components["schemas"]["Source"] | string;
            } | null;
            /** @description Why the last delivery failed (the mail server's answer), when `deliveryStatus` is `failed`; while `sent`, the last temporary failure reported after the relay took the e-mail (a 4.x.x status: the relay retries, nothing else changes). */
            deliveryError?: string | null;
            /**
             * Format: date-time
             * @description When the e-mail bounced (a permanent failure); null unless `deliveryStatus` is `bounced`.
             * @example 2026-11-23T09:47:12.004Z
             */
            bouncedAt?: string | null;
            /**
             * @description The recipient's mail server's answer, as reported: the status and its diagnostic.
             * @example 5.1.1 smtp; 550 5.1.1 <alan@example.com>: Recipient address rejected: User unknown
             */
            bounceReason?: string | null;
            /** Format: date-time */
            expiresAt: string;
            /** Format: date-time */
            lastSentAt?: string | null;
            /** Format: date-time */
            acceptedAt?: string | null;
            /** Format: date-time */
            revokedAt?: string | null;
            /**
             * Format: date-time
             * @description When the invitee first opened the signup page (its preview request, made by the page
             *     after it loads, never by fetching the link: a mail scanner's GET records nothing).
             *     Later opens record nothing.
             */
            viewedAt?: string | null;
            /**
             * Format: date-time
             * @description When its one reminder e-mail was sent (queued to the relay), per the workspace's `invitationReminderDays`.
             */
            remindedAt?: string | null;
            /**
             * @description The invitee's language as given when it was made (BCP 47); its e-mails are written in it. Null, the workspace's `locale`.
             * @example ja
             */
            locale?: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        InvitationFunnel: {
            /** Format: date-time */
            since: string;
            /** Format: date-time */
            until: string;
            /** @description Invitations made in the period and handed to the mail relay or the identity provider. */
            sent: number;
            /** @description Of those, the ones whose signup page was opened (`viewedAt`). */
            viewed: number;
            /** @description Of those, the ones accepted. */
            accepted: number;
            /** @description Of those, the ones that expired without ever being viewed. */
            expiredUnseen: number;
            /** @description Of those, the ones whose e-mail bounced (a permanent failure reported after the relay took it). */
            bounced: number;
        };
        InviteBatchRequest: {
            /** @description The role of every row that names none (default `member`). */
            role?: components["schemas"]["Role"];
            /** @description The language of every row that names none; absent, the workspace's `locale`. */
            locale?: components["schemas"]["LanguageTag"];
            rows: {
                /** @description The address, as pasted (surrounding spaces are trimmed, case is ignored). One that is not an e-mail address is reported `invalid`, not refused. */
                email: string;
                role?: components["schemas"]["Role"];
                /** @description This invitee's language (see `InviteUserRequest.locale`); absent, the request's `locale`, else the workspace's. */
                locale?: components["schemas"]["LanguageTag"];
            }[];
        };
        InvitationBatchRow: {
            /** @description The row's position in the request (from 0). */
            index: number;
            /** @description The address as normalized (or as sent when invalid). */
            email: string;
            role: components["schemas"]["Role"];
            /** @enum {string} */
            result: "invited" | "resent" | "already_member" | "invalid" | "duplicate" | "over_budget";
            /** Format: uuid */
            invitationId: string | null;
            /**
             * @description The row's e-mail (invited and resent rows only).
             * @enum {string|null}
             */
            delivery: "queued" | "sent" | "failed" | "cancelled" | null;
            /** @description For `over_budget`: seconds until the budget has room again. */
            retryAfter: number | null;
            /** @description For `duplicate`: the `index` of the earlier row of the same address (the one that carries its result); null otherwise. */
            duplicateOf: number | null;
            /** @description Why the row was not invited, or why its e-mail failed, for people; its wording may change in any release (programs read `result`, `delivery` and `duplicateOf`). */
            message: string | null;
        };
        InvitationBatch: {
            /** Format: uuid */
            id: string;
            /**
             * @description `completed` once no e-mail of the batch is left to send.
             * @enum {string}
             */
            status: "processing" | "completed";
            total: number;
            results: {
                invited: number;
                resent: number;
                alreadyMember: number;
                invalid: number;
                duplicate: number;
                overBudget: number;
            };
            delivery: {
                queued: number;
                sent: number;
                failed: number;
                cancelled: number;
            };
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            completedAt: string | null;
            items: components["schemas"]["InvitationBatchRow"][];
            nextCursor: string | null;
        };
        InvitationList: {
            items: components["schemas"]["Invitation"][];
            nextCursor: string | null;
        };
        /**
         * @description The audit trail's actions known to this version. A catalogue that grows with every feature: `AuditEvent.action` is open (one of these or any other string, added in a minor version); the `action` filter takes these. `sso.break_glass_sign_in`: a workspace admin signed in with an e-mailed link although their address's domain requires single sign-on (recorded beside its `session.login`; the payload names the domain and the connection).
         * @enum {string}
         */
        AuditAction: "invitation.created" | "invitation.resent" | "invitation.revoked" | "invitation.accepted" | "invitation.email_failed" | "member.role_changed" | "member.removed" | "api_key.created" | "api_key.revoked" | "chat.installed" | "chat.uninstalled" | "invite_request.created" | "invite_request.approved" | "invite_request.denied" | "workspace.settings_changed" | "session.login" | "session.logout" | "invitation.expired" | "member.joined" | "invitation.viewed" | "webhook_endpoint.created" | "webhook_endpoint.updated" | "webhook_endpoint.deleted" | "webhook_endpoint.secret_rotated" | "webhook_endpoint.disabled" | "webhook_endpoint.tested" | "invite_link.created" | "invite_link.regenerated" | "invite_link.revoked" | "invitation.bounced" | "invitation.delivery_delayed" | "invitation.bounce_superseded" | "invitation.reminder_sent" | "domain.added" | "domain.verified" | "domain.failed" | "domain.removed" | "domain.policy_changed" | "member.suspended" | "member.reactivated" | "sso_connection.created" | "sso_connection.updated" | "sso_connection.deleted" | "sso.sign_in_refused" | "sso.break_glass_sign_in" | "sso_connection.certificate_expiring" | "workspace.branding_changed" | "audit_stream.created" | "audit_stream.updated" | "audit_stream.deleted" | "audit_stream.tested" | "audit_stream.paused" | "audit_stream.resumed" | "audit.records_deleted";
        AuditEvent: {
            /**
             * Format: uuid
             * @description A UUIDv7 (time, then random bits); ids reveal nothing about other workspaces.
             */
            id: string;
            /** @description An `AuditAction`, or an action added since: open (a newer service may record others; show it by its name). */
            action: components["schemas"]["AuditAction"] | string;
            actor: {
                /** @description An `AuditActorType`, or a kind of actor added since: open. */
                type: components["schemas"]["AuditActorType"] | string;
                id: string | null;
                label: string | null;
            };
            /** @description A `Source`, or a door added since: open. */
            source: components["schemas"]["Source"] | string;
            target: {
                type: string;
                id: string;
            } | null;
            payload: {
                [key: string]: unknown;
            };
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: uuid
             * @description The workspace the record belongs to (its chain is the workspace's).
             */
            workspaceId?: string;
            /** @description The record's place in its workspace's hash chain (1, 2, 3… with no gap); null for a record written before the chain began (docs/audit.md, "The record format"). */
            sequence?: number | null;
            /** @description `hash` of the record before this one in the workspace's chain; null for the chain's first record and for a record older than the chain. */
            previousHash?: string | null;
            /** @description SHA-256 (lower-case hex) over the RFC 8785 canonical JSON of `id`, `workspaceId`, `action`, `actor`, `source`, `target`, `payload`, `createdAt` and `previousHash`; null for a record older than the chain. `npm run audit:verify` recomputes it. */
            hash?: string | null;
        };
        /** @description An Ed25519 public key of the service as a JWK (RFC 8037), with when it was made and retired. */
        AuditSigningKey: {
            /** @description The key's id, as digests name it. */
            kid: string;
            /** @enum {string} */
            kty: "OKP";
            /** @enum {string} */
            crv: "Ed25519";
            /** @enum {string} */
            alg: "EdDSA";
            /** @enum {string} */
            use: "sig";
            /** @description The raw public key (base64url). */
            x: string;
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: date-time
             * @description When it stopped signing; null: it signs now.
             */
            retiredAt: string | null;
        };
        AuditSigningKeyList: {
            items: components["schemas"]["AuditSigningKey"][];
        };
        /** @description A signed digest of a segment of a workspace's audit chain (see `getAuditEventsDigests`). */
        AuditDigest: {
            /** Format: uuid */
            workspaceId: string;
            /**
             * Format: date-time
             * @description The start of the hour the digest closes.
             */
            hour: string;
            firstSequence: number;
            lastSequence: number;
            /** Format: uuid */
            firstId: string;
            /** Format: uuid */
            lastId: string;
            /** @description The records of the segment the trail held when it was signed. */
            count: number;
            lastHash: string;
            previousDigestHash: string | null;
            digestHash: string;
            kid: string;
            /** @description Ed25519 (base64url). */
            signature: string;
        };
        AuditDigestList: {
            items: components["schemas"]["AuditDigest"][];
            nextCursor: string | null;
        };
        AuditEventList: {
            items: components["schemas"]["AuditEvent"][];
            nextCursor: string | null;
        };
        CreateApiKeyRequest: {
            name: string;
            /** @description What the key may do (the catalogue is `ApiKeyScope`); at least one, each once. */
            scopes: components["schemas"]["ApiKeyScope"][];
            /**
             * Format: date-time
             * @description When the key stops working (after now, at most 366 days ahead); without it the key works until it is revoked.
             */
            expiresAt?: string;
        };
        /**
         * @description The scope catalogue: what an API key may do. Each operation open to keys names the scopes it needs on its `apiKey` security requirement; `members:admin` is needed besides an operation's own scope for anything that makes or unmakes an admin (`x-api-key-admin-scope`). A catalogue that grows: a key's `scopes` in a response are open (these or any other string, added in a minor version); a key is made only with these.
         * @enum {string}
         */
        ApiKeyScope: "workspace:read" | "workspace:write" | "members:read" | "members:write" | "members:admin" | "invitations:read" | "invitations:write" | "requests:read" | "requests:write" | "links:read" | "links:write" | "domains:read" | "domains:write" | "webhooks:read" | "webhooks:write" | "sso:read" | "sso:write" | "events:read" | "audit:read" | "audit-streams:read" | "audit-streams:write" | "scim";
        ApiKey: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @description The first characters of the key, to recognise it. */
            prefix: string;
            /** Format: uuid */
            createdBy: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            lastUsedAt: string | null;
            /** @description The creator's e-mail (null once they are removed). */
            createdByEmail: string | null;
            /** @description `ApiKeyScope`s, or scopes added since: open (a key made by a newer service may hold others). */
            scopes: (components["schemas"]["ApiKeyScope"] | string)[];
            /**
             * Format: date-time
             * @description When the key stops working; null for never.
             */
            expiresAt: string | null;
        };
        ApiKeyCreated: {
            /** Format: uuid */
            id: string;
            name: string;
            prefix: string;
            /** Format: uuid */
            createdBy: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            lastUsedAt: string | null;
            /** @description The creator's e-mail (null once they are removed). */
            createdByEmail: string | null;
            /** @description `ApiKeyScope`s, or scopes added since: open (a key made by a newer service may hold others). */
            scopes: (components["schemas"]["ApiKeyScope"] | string)[];
            /**
             * Format: date-time
             * @description When the key stops working; null for never.
             */
            expiresAt: string | null;
            /** @description The whole key. Shown once. */
            secret: string;
        };
        ApiKeyList: {
            items: components["schemas"]["ApiKey"][];
        };
        /** @description A Resend webhook event, as Resend posts it (Resend adds fields over time, so others are allowed). */
        ResendEmailEvent: {
            type: string;
            created_at?: string;
            data: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        EmailEventAck: {
            /**
             * @description `bounced`: marked bounced; `recorded`: a temporary failure kept as the last delivery error, or a report about an e-mail older than the last send kept in the audit trail only; `ignored`: not about an invitation e-mail of ours, or a delivery applied already.
             * @enum {string}
             */
            outcome: "bounced" | "recorded" | "ignored";
            /** @description How many invitations it changed. */
            invitations: number;
        };
        /** @description A Slack Events API envelope (`url_verification` or `event_callback`). */
        SlackEnvelope: {
            type: string;
            challenge?: string;
            team_id?: string;
            event_id?: string;
            event?: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        SlackAck: {
            ok?: boolean;
            challenge?: string;
        };
        /** @description A slash command as Slack posts it (form fields; Slack adds fields over time, so others are allowed). */
        SlackCommand: {
            command: string;
            text?: string;
            team_id: string;
            user_id: string;
            channel_id?: string;
            trigger_id: string;
            response_url: string;
        } & {
            [key: string]: unknown;
        };
        SlackCommandAck: {
            /** @enum {string} */
            response_type: "ephemeral" | "in_channel";
            text: string;
        };
        SlackInteraction: {
            payload: string;
        };
        SlackInteractionAck: {
            /** @enum {string} */
            response_action?: "errors";
            errors?: {
                [key: string]: string;
            };
        };
        /**
         * @description `admins`: only admins invite; `request`: members ask, admins approve; `members`: members may invite members.
         * @enum {string}
         */
        InvitePolicy: "admins" | "request" | "members";
        WorkspaceSettings: {
            /** @description The workspace's name. */
            name: string;
            invitePolicy: components["schemas"]["InvitePolicy"];
            invitationReminderDays: components["schemas"]["InvitationReminderDays"];
            /** @description The Slack app (read-only here: installed through `/api/oauth/slack/install`, removed in Slack). */
            slack: {
                /** @description Whether this service is configured for Slack (SLACK_CLIENT_ID and the rest). */
                available: boolean;
                /** @description Whether the app is installed in a Slack team for this workspace. */
                installed: boolean;
                /** @description The Slack team it is installed in. */
                teamName: string | null;
                /**
                 * Format: date-time
                 * @description When it was (last) installed.
                 */
                installedAt: string | null;
            };
            /** @description Single sign-on through WorkOS (read-only; set by the operator). */
            identityProvider: {
                /** @description Whether this service is configured for an identity provider (WORKOS_API_KEY and the rest). */
                available: boolean;
                /** @description Whether this workspace is linked to an organization of the identity provider. */
                organizationLinked: boolean;
            };
            directory: components["schemas"]["DirectorySettings"];
            auditRetentionDays?: components["schemas"]["AuditRetentionDays"];
            /** @description The workspace's default language (BCP 47, default `en`) for e-mails to whoever has none of their own (an invitation's, a member's). */
            locale?: components["schemas"]["LanguageTag"];
            /** @description The IANA time zone its e-mails write dates and times in (default `UTC`), e.g. `Europe/Berlin`. */
            timeZone?: string;
        };
        /** @description The company directory (SCIM, `/api/scim/v2`). `adminGroup`: the displayName of the directory group whose members are admins (compared case-insensitively; null: the directory sets no roles). It sets roles only for members the directory provisioned or linked, when the directory next changes that group or those members; never the last active admin's. `welcomeEmail`: a member the directory creates gets an e-mail with a sign-in link (off unless turned on). */
        DirectorySettings: {
            adminGroup: string | null;
            welcomeEmail: boolean;
        };
        /**
         * @description How many days the audit trail keeps a record (30 to 3650), or `null`: for good (every
         *     workspace starts so). The retention sweep (`RETENTION_SWEEP_MINUTES`) deletes the records
         *     older than that, oldest first, and records what it deleted as `audit.records_deleted` (payload: `count`, `before`,
         *     `fromSequence`, `toSequence`, `lastHash` — the hash of the last record deleted, which the
         *     first record kept carries as its `previousHash`), so the rest of the chain still verifies.
         *     An export made before a deletion verifies as it did (docs/audit.md, "Retention").
         */
        AuditRetentionDays: number | null;
        /**
         * @description How many days before it expires a pending invitation gets its one reminder e-mail (1 to 7;
         *     every workspace starts at 2), or `null`: no reminders. The reminder carries the link the
         *     invitation e-mail carried (no new link) and is sent to pending invitations only, once
         *     (`remindedAt`, event `invitation.reminder_sent`). An invitation whose whole life is shorter
         *     than this gets none, and so does one the identity provider sent.
         */
        InvitationReminderDays: number | null;
        WorkspaceSettingsPatch: {
            /** @description A new name for the workspace (surrounding spaces are dropped). */
            name?: string;
            invitePolicy?: components["schemas"]["InvitePolicy"];
            invitationReminderDays?: components["schemas"]["InvitationReminderDays"];
            /** @description The company directory's settings to change (see `DirectorySettings`). */
            directory?: {
                adminGroup?: string | null;
                welcomeEmail?: boolean;
            };
            auditRetentionDays?: components["schemas"]["AuditRetentionDays"];
            /** @description The workspace's default language for e-mails (see `WorkspaceSettings.locale`). */
            locale?: components["schemas"]["LanguageTag"];
            /** @description An IANA time zone (`Europe/Berlin`, `Asia/Tokyo`, `UTC`); one the service does not know is refused (400 VALIDATION_FAILED). */
            timeZone?: string;
        };
        /** @description The workspace's look; `null` fields are not set (see `getWorkspaceBranding`). */
        WorkspaceBranding: {
            /** @description What e-mails and pages call the workspace; null: its name. */
            displayName: string | null;
            /** @description The links' and buttons' colour (lowercase #rrggbb, at least 4.5:1 against white); null: the service's. */
            accentColor: string | null;
            /** @description The From name of its e-mails; null: "<display name> via <service>". */
            senderName: string | null;
            logo: null | {
                /**
                 * Format: uri
                 * @description Where the service serves it (`GET /branding/logos/{file}`), under `APP_URL`.
                 */
                url: string;
                sha256: string;
                /** @enum {string} */
                mediaType: "image/png" | "image/jpeg" | "image/webp";
                /** @description Bytes. */
                size: number;
            };
        };
        WorkspaceBrandingPatch: {
            /** @description What e-mails and pages call the workspace (surrounding spaces are dropped); null: its name. */
            displayName?: string | null;
            /** @description #rrggbb reaching 4.5:1 against white (stored lowercase); null: the service's colour. */
            accentColor?: string | null;
            /** @description The From name of its e-mails (surrounding spaces are dropped; no quotes or angle brackets); null: "<display name> via <service>". */
            senderName?: string | null;
        };
        /** @enum {string} */
        InviteRequestStatus: "pending" | "approved" | "denied" | "expired";
        InviteRequest: {
            /** Format: uuid */
            id: string;
            /** Format: email */
            email: string;
            role: components["schemas"]["Role"];
            status: components["schemas"]["InviteRequestStatus"];
            /** @description The member who asked (null once removed, and for a person who proved an address at a verified domain under `suggest`, or an invite link). */
            requestedBy: string | null;
            decidedBy: string | null;
            /** Format: date-time */
            decidedAt: string | null;
            /** @description The reason given with a denial. */
            reason: string | null;
            /** Format: date-time */
            expiresAt: string;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        InviteRequestList: {
            items: components["schemas"]["InviteRequest"][];
            nextCursor: string | null;
        };
        /** @description The role the approving admin grants. Without `role` the invitation is for a `member`, whatever the requester asked for: only an admin who names `admin` invites an admin. */
        ApproveInviteRequest: {
            role?: components["schemas"]["Role"];
        };
        DenyInviteRequest: {
            reason?: string;
        };
        ApprovedInviteRequest: {
            request: components["schemas"]["InviteRequest"];
            invitation: components["schemas"]["InviteUserResponse"];
        };
        CreateInviteLinkRequest: {
            /** @description What admins call the link ("Spring fair stand"), shown in the console, in Activity and in its events. Optional. */
            name?: string;
            /**
             * @description The role a person joins with. A link never makes admins.
             * @default member
             * @enum {string}
             */
            role: "member";
            /**
             * @description How many confirmed addresses the link admits; null (the default) is unlimited.
             * @default null
             */
            maxUses: number | null;
            /**
             * @description Hours until the link stops working, from 1 hour to 90 days (default 7 days).
             * @default 168
             */
            expiresInHours: number;
            /**
             * @description When not empty, only addresses at these domains (exactly, compared case-insensitively) may use the link.
             * @default []
             */
            allowedDomains: string[];
            /**
             * @description Each confirmed address becomes an invite request the admins approve or deny.
             * @default false
             */
            requiresApproval: boolean;
            /** @description The language of the e-mails the link's joiners get (a BCP 47 tag); absent, the workspace's `locale`. */
            locale?: components["schemas"]["LanguageTag"];
        };
        /** @enum {string} */
        InviteLinkStatus: "active" | "expired" | "used_up" | "revoked";
        InviteLink: {
            /** Format: uuid */
            id: string;
            /** @description What admins call the link; null when it was given none. */
            name: string | null;
            /** @enum {string} */
            role: "member";
            status: components["schemas"]["InviteLinkStatus"];
            maxUses: number | null;
            /** @description Confirmed addresses so far: members who joined, or invite requests made. */
            uses: number;
            allowedDomains: string[];
            requiresApproval: boolean;
            /** Format: date-time */
            expiresAt: string;
            /** Format: uuid */
            createdBy: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            revokedAt: string | null;
            /** @description The language of its joiners' e-mails as given when it was made (BCP 47); null, the workspace's `locale`. */
            locale?: string | null;
        };
        InviteLinkCreated: {
            /** Format: uuid */
            id: string;
            name: string | null;
            /** @enum {string} */
            role: "member";
            status: components["schemas"]["InviteLinkStatus"];
            maxUses: number | null;
            uses: number;
            allowedDomains: string[];
            requiresApproval: boolean;
            /** Format: date-time */
            expiresAt: string;
            /** Format: uuid */
            createdBy: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            revokedAt: string | null;
            /** @description The language of its joiners' e-mails as given (BCP 47); null, the workspace's `locale`. */
            locale?: string | null;
            /**
             * Format: uri
             * @description The whole link, `{PUBLIC_URL}/join/{code}`. Shown once.
             */
            url: string;
        };
        InviteLinkList: {
            items: components["schemas"]["InviteLink"][];
            nextCursor: string | null;
        };
        JoinRequest: {
            /**
             * Format: email
             * @description The address to prove (a confirmation link is e-mailed to it).
             */
            email: string;
            /** @description The display name to join with. */
            name?: string;
        };
        /** @description A JSON-RPC 2.0 message or batch. */
        JsonRpcMessage: {
            [key: string]: unknown;
        } | {
            [key: string]: unknown;
        }[];
        /**
         * @description The event catalogue. Each is an audit-trail action, written in the same transaction as the change. A catalogue that grows: an event's `type` (the feed, webhook payloads) and an endpoint's subscriptions in responses are open (these or any other string, added in a minor version); an endpoint subscribes only to these.
         * @enum {string}
         */
        EventType: "invitation.created" | "invitation.resent" | "invitation.accepted" | "invitation.revoked" | "invitation.expired" | "invitation.delivery_failed" | "invitation.viewed" | "member.joined" | "member.role_changed" | "member.removed" | "api_key.created" | "api_key.revoked" | "chat.installed" | "chat.uninstalled" | "invite_link.created" | "invite_link.regenerated" | "invite_link.revoked" | "invite_request.created" | "invite_request.approved" | "invite_request.denied" | "domain.added" | "domain.verified" | "domain.failed" | "domain.removed" | "webhook.test" | "invitation.bounced" | "invitation.reminder_sent" | "member.suspended" | "member.reactivated" | "sso.certificate_expiring";
        /**
         * @description One event, as the feed lists it and as a webhook delivers it (the body of the POST).
         *     `data` is thin: ids, e-mail, role, status; never a token, a link or a secret.
         */
        Event: {
            /**
             * @description `evt_` and a UUIDv7 (time, then random bits). Unique; also the `webhook-id` of every delivery attempt.
             * @example evt_01a207db-23dc-73c1-a2d4-6e8f0b1c3d5e
             */
            id: string;
            /** @description An `EventType`, or an event added since: open (a newer service may send others; ignore or log what you do not handle). */
            type: components["schemas"]["EventType"] | string;
            /** Format: date-time */
            timestamp: string;
            /** Format: uuid */
            workspaceId: string;
            actor: {
                /** @description Who acted (`user`, `api_key`, `chat_user`, `system`), or a kind added since; open. */
                type: ("user" | "api_key" | "chat_user" | "system") | string;
                id: string | null;
            };
            /** @description The door the change came through: a `Source`, or a door added since; open. */
            source: components["schemas"]["Source"] | string;
            /** @description The HTTP request (or chat event) that caused the change. */
            requestId: string | null;
            /** @description The request's Idempotency-Key, if it had one. */
            idempotencyKey: string | null;
            data: components["schemas"]["EventData"];
        };
        /** @description What the event is about. Which fields are present depends on `type` (see the `webhooks` section). */
        EventData: {
            /** Format: uuid */
            invitationId?: string;
            /** Format: uuid */
            userId?: string;
            /** Format: uuid */
            apiKeyId?: string;
            /** Format: uuid */
            installationId?: string;
            /** Format: uuid */
            inviteRequestId?: string;
            email?: string;
            /** @enum {string} */
            role?: "admin" | "member";
            /**
             * @description The previous role (member.role_changed).
             * @enum {string}
             */
            from?: "admin" | "member";
            /**
             * @description The new role (member.role_changed).
             * @enum {string}
             */
            to?: "admin" | "member";
            reason?: string;
            /** @enum {string} */
            deliveryStatus?: "failed" | "bounced";
            revokedSessions?: number;
            revokedApiKeys?: number;
            /** @description The API key's name, or the invite link's (invite_link.*, when it has one). */
            name?: string;
            /** @description The API key's public prefix (never the secret). */
            prefix?: string;
            /** @description The chat platform (`slack`), or one added since; open. */
            platform?: "slack" | string;
            teamId?: string;
            teamName?: string | null;
            scopes?: string;
            reinstall?: boolean;
            /**
             * Format: uuid
             * @description The invite link (invite_link.*; member.joined when the person came through one).
             */
            inviteLinkId?: string;
            /** @description The invite link's maximum uses; null is unlimited. */
            maxUses?: number | null;
            /** Format: date-time */
            expiresAt?: string;
            allowedDomains?: string[];
            requiresApproval?: boolean;
            /** Format: uuid */
            domainId?: string;
            /** @description The e-mail domain (domain.*; member.joined when the person joined through it). */
            domain?: string;
            policy?: components["schemas"]["DomainPolicy"];
            /**
             * Format: uuid
             * @description The SSO connection (sso.*).
             */
            ssoConnectionId?: string;
            /** @description The certificate's SHA-256 fingerprint, as providers show it (sso.certificate_expiring). */
            fingerprintSha256?: string;
        };
        /**
         * @description `pending` until the TXT record is found (`verified`); `failed` after 30 days pending.
         * @enum {string}
         */
        DomainStatus: "pending" | "verified" | "failed";
        /**
         * @description Who may join through a verified domain: nobody (`off`), by invite request (`suggest`), at once as a member (`auto_join`).
         * @enum {string}
         */
        DomainPolicy: "off" | "suggest" | "auto_join";
        Domain: {
            /** Format: uuid */
            id: string;
            /** @description The domain in lower case, an internationalized name in its ASCII (`xn--`) form. */
            domain: string;
            status: components["schemas"]["DomainStatus"];
            policy: components["schemas"]["DomainPolicy"];
            /** @description The DNS record to publish (it may stay published; it proves nothing to anyone else). */
            verification: {
                /** @enum {string} */
                type: "TXT";
                /** @description `_workspace-verification.<domain>` */
                name: string;
                /** @description `ws-verify=<token>`, a random token of this domain in this workspace. */
                value: string;
            };
            /**
             * Format: date-time
             * @description The last look at DNS.
             */
            checkedAt: string | null;
            /** @description Why the last look did not verify it (null once verified). */
            checkError: string | null;
            /** Format: date-time */
            verifiedAt: string | null;
            /** Format: date-time */
            failedAt: string | null;
            /**
             * Format: date-time
             * @description When a pending domain becomes `failed` (null otherwise).
             */
            failsAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DomainList: {
            items: components["schemas"]["Domain"][];
        };
        CreateDomainRequest: {
            /**
             * @description A domain name (an internationalized one is converted to its `xn--` form); no scheme, path or `@`.
             * @example acme-robotics.com
             */
            domain: string;
            policy?: components["schemas"]["DomainPolicy"];
        };
        UpdateDomainRequest: {
            policy: components["schemas"]["DomainPolicy"];
        };
        DomainJoinPreview: {
            /** @description The proven address. */
            email: string;
            workspace: components["schemas"]["Workspace"];
            domain: string;
            /**
             * @description `auto_join`: confirming joins as a member; `suggest`: it asks the admins.
             * @enum {string}
             */
            policy: "suggest" | "auto_join";
            /** Format: date-time */
            expiresAt: string;
            /** @description True when this browser asked for the link (its `login_link_browser` cookie matches the one `POST /api/auth/login-link` set). False when it is opened elsewhere, or someone sent it. */
            sameBrowser: boolean;
        };
        /**
         * @description `oidc`: OpenID Connect (settings under `oidc`); `saml`: SAML 2.0 (settings under `saml`).
         * @enum {string}
         */
        SsoProtocol: "oidc" | "saml";
        /**
         * @description Who may sign in: `existing`, members only (invited, or provisioned by the directory); `create`, anyone the provider vouches for at one of the connection's domains, made a member with `defaultRole` at the first sign-in.
         * @enum {string}
         */
        SsoAccounts: "existing" | "create";
        /**
         * @description What people see on the sign-in button ("Continue with …").
         * @example Okta
         */
        SsoConnectionName: string;
        /** @description Names of the workspace's verified domains whose addresses the connection serves (each serves at most one connection). */
        SsoDomains: string[];
        /**
         * Format: uri
         * @description An absolute http(s) URL, read as `WebhookUrl` is. Outside `local`, only https to a public address, or to a host the operator lists in `SSO_ALLOWED_HOSTS` (422 `SSO_URL_NOT_ALLOWED`).
         * @example https://acme.okta.com
         */
        SsoUrl: string;
        /** @description An X.509 certificate in PEM; it must parse (422 `SSO_CERTIFICATE_INVALID`). */
        SsoCertificatePem: string;
        /** @description The IdP's SAML metadata document as pasted (XML), kept as it is. */
        SsoMetadataXml: string;
        OidcSettingsRequest: {
            /** @description The provider's issuer (discovery at `/.well-known/openid-configuration`). Entra ID's multi-tenant issuers are refused. */
            issuer: components["schemas"]["SsoUrl"];
            /** @description The client (application) id the provider gave. */
            clientId: string;
            /** @description The client secret; sealed at rest and never returned. */
            clientSecret: string;
            /**
             * Format: uuid
             * @description Entra ID: the directory (tenant) id, pinned; required when the issuer is at login.microsoftonline.com and must be the one it names.
             */
            tenantId?: string;
        };
        OidcSettingsUpdate: {
            issuer?: components["schemas"]["SsoUrl"];
            clientId?: string;
            clientSecret?: string;
            /** Format: uuid */
            tenantId?: string | null;
        };
        /** @description The IdP's metadata by URL (`idpMetadataUrl`) or pasted (`idpMetadataXml`), one of them. */
        SamlSettingsRequest: {
            /** @description Where the IdP publishes its metadata. Fetched once when saved (422 `SSO_METADATA_UNAVAILABLE` when it fails, times out after 5 s, is over 1 MiB or is not metadata with an HTTP-Redirect sign-on endpoint), then at sign-in at most once an hour; when a refresh fails the last good copy serves up to 24 hours. It supplies the entity id and sign-on URL not set here, never a key: only `idpCertificates` verify a response. Redirects are not followed. */
            idpMetadataUrl?: components["schemas"]["SsoUrl"];
            idpMetadataXml?: components["schemas"]["SsoMetadataXml"];
            /** @description The IdP's signing certificates; several during a rotation. Only these verify a response. */
            idpCertificates: components["schemas"]["SsoCertificatePem"][];
            /** @description The IdP's entity id (else read from its metadata). */
            idpEntityId?: string;
            /** @description The IdP's single sign-on URL (else read from its metadata). */
            idpSsoUrl?: components["schemas"]["SsoUrl"];
            /** @description IdP-initiated sign-in (a tile in the provider's dashboard). Off: an unsolicited response is refused. On: it is never believed either; it starts a fresh SP-initiated sign-in with the same provider, which answers it at once while the person is signed in there. Absent: false. */
            idpInitiated?: boolean;
        };
        /** @description Setting `idpMetadataUrl` clears `idpMetadataXml` and the other way round (null clears one). */
        SamlSettingsUpdate: {
            /**
             * Format: uri
             * @description A new metadata URL is fetched once before it is saved, as on creation (422 `SSO_METADATA_UNAVAILABLE`).
             */
            idpMetadataUrl?: string | null;
            idpMetadataXml?: string | null;
            idpCertificates?: components["schemas"]["SsoCertificatePem"][];
            idpEntityId?: string | null;
            /** Format: uri */
            idpSsoUrl?: string | null;
            idpInitiated?: boolean;
        };
        /** @description The settings of `protocol` under its name (`oidc` or `saml`), and not the other's. */
        CreateSsoConnectionRequest: {
            name: components["schemas"]["SsoConnectionName"];
            protocol: components["schemas"]["SsoProtocol"];
            domains?: components["schemas"]["SsoDomains"];
            /** @description Absent: `existing`. */
            accounts?: components["schemas"]["SsoAccounts"];
            /** @description The role of a member made at first sign-in (`accounts: create` only; default `member`). */
            defaultRole?: components["schemas"]["Role"];
            /** @description Sign-in by SSO is required for addresses at the connection's domains (admins keep the e-mailed link as a break-glass). Absent: false. */
            required?: boolean;
            oidc?: components["schemas"]["OidcSettingsRequest"];
            saml?: components["schemas"]["SamlSettingsRequest"];
        };
        UpdateSsoConnectionRequest: {
            name?: components["schemas"]["SsoConnectionName"];
            domains?: components["schemas"]["SsoDomains"];
            accounts?: components["schemas"]["SsoAccounts"];
            defaultRole?: components["schemas"]["Role"];
            required?: boolean;
            oidc?: components["schemas"]["OidcSettingsUpdate"];
            saml?: components["schemas"]["SamlSettingsUpdate"];
        };
        SsoCertificate: {
            pem: string;
            /** @description SHA-256 of the DER, as providers show it. */
            fingerprintSha256: string;
            subject: string;
            /**
             * Format: date-time
             * @description When the certificate expires.
             */
            notAfter: string;
        };
        OidcConnectionSettings: {
            issuer: string;
            clientId: string;
            /** @description A client secret is stored (sealed); it is never returned. */
            clientSecretSet: boolean;
            /** Format: uuid */
            tenantId: string | null;
            /** @description Paste into the provider: the redirect (callback) URI, `{PUBLIC_URL}/api/oauth/sso/callback`. */
            redirectUri: string;
        };
        SamlConnectionSettings: {
            /** @description Where the IdP's metadata is fetched (at most once an hour; its entity id and sign-on URL where these are null), or null when pasted. */
            idpMetadataUrl: string | null;
            idpMetadataXml: string | null;
            idpCertificates: components["schemas"]["SsoCertificate"][];
            idpEntityId: string | null;
            idpSsoUrl: string | null;
            /** @description IdP-initiated sign-in (a tile in the provider's dashboard). Off: an unsolicited response is refused. On: it is never believed either; it starts a fresh SP-initiated sign-in with the same provider, which answers it at once while the person is signed in there. */
            idpInitiated: boolean;
            /** @description Paste into the provider: this connection's SP entity id (Audience). */
            spEntityId: string;
            /** @description Paste into the provider: the Assertion Consumer Service URL (Reply URL). */
            acsUrl: string;
            /** @description This connection's SP metadata, for providers that import it. */
            spMetadataUrl: string;
        };
        /** @description What an admin's test sign-in received from the identity provider; no one was signed in. */
        SsoTestSignIn: {
            /** Format: uuid */
            connectionId: string;
            /** @enum {string} */
            protocol: "oidc" | "saml";
            /** @description The ID token's `iss`, or the assertion's Issuer. */
            issuer: string;
            /** @description The ID token's `sub`, or the assertion's NameID: with the issuer, who the person is to this connection. */
            subject: string;
            /** @description The address the provider states, if any. */
            email: string | null;
            /** @description Whether the provider vouches for the address (OIDC: `email_verified`, Entra ID `xms_edov`; SAML: at one of the connection's domains). */
            emailVerified: boolean;
            /** @description Other claims (OIDC `name`, `tid`, `hd`) or the assertion's attributes, by name. */
            claims: {
                [key: string]: string[];
            };
        };
        SamlAcsForm: {
            /** @description The base64 SAML Response. */
            SAMLResponse: string;
            /** @description The state this service sent with the request. */
            RelayState?: string;
        };
        SsoConnection: {
            /** Format: uuid */
            id: string;
            name: string;
            protocol: components["schemas"]["SsoProtocol"];
            domains: string[];
            accounts: components["schemas"]["SsoAccounts"];
            /**
             * @description The role of a member made at first sign-in; null under `accounts: existing`.
             * @enum {string|null}
             */
            defaultRole: "admin" | "member" | null;
            required: boolean;
            /** @description The OpenID Connect settings (null on a SAML connection). */
            oidc: components["schemas"]["OidcConnectionSettings"] | null;
            /** @description The SAML settings (null on an OpenID Connect connection). */
            saml: components["schemas"]["SamlConnectionSettings"] | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        SsoConnectionList: {
            items: components["schemas"]["SsoConnection"][];
        };
        EventList: {
            items: components["schemas"]["Event"][];
            /** @description Pass as `after` to read on (an empty page keeps the cursor it was given); null only when the feed is empty and no `after` was given. */
            nextCursor: string | null;
        };
        /**
         * Format: uri
         * @description An absolute http(s) URL that is both an RFC 3986 URI and a WHATWG URL (what `fetch` and Node's `new URL()` parse): a non-empty host, a port up to 65535, IPv4 octets up to 255, no `%00` or invalid punycode in the host. Anything else is 400 `VALIDATION_FAILED`. Outside `local`, only https to a public address (400 `WEBHOOK_URL_NOT_ALLOWED`).
         * @example https://hooks.example.com/workspace
         */
        WebhookUrl: string;
        CreateWebhookEndpointRequest: {
            url: components["schemas"]["WebhookUrl"];
            /** @description The event types to deliver; absent means all, now and in the future. */
            eventTypes?: components["schemas"]["EventType"][];
            description?: string;
        };
        UpdateWebhookEndpointRequest: {
            url?: components["schemas"]["WebhookUrl"];
            /** @description null delivers every event type. */
            eventTypes?: components["schemas"]["EventType"][] | null;
            enabled?: boolean;
        };
        WebhookEndpoint: {
            /** Format: uuid */
            id: string;
            url: string;
            description: string | null;
            eventTypes: (components["schemas"]["EventType"] | string)[] | null;
            enabled: boolean;
            /** @description Why the service disabled it (`gone`, the endpoint answered 410; `failing`, it failed for 3 days), or a reason added since (open); null when an admin did. */
            disabledReason: ("gone" | "failing" | null) | string;
            /** Format: date-time */
            failingSince: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /**
         * @description Where an audit stream delivers: `https` (a JSON array of CloudEvents, signed as webhooks are), `splunk` (HTTP Event Collector) or `datadog` (logs intake, v2).
         * @enum {string}
         */
        AuditStreamKind: "https" | "splunk" | "datadog";
        CreateAuditStreamRequest: {
            kind: components["schemas"]["AuditStreamKind"];
            name: string;
            /**
             * Format: uri
             * @description The receiver's address: Splunk's `…/services/collector/event`, Datadog's `…/api/v2/logs`, or your own HTTPS endpoint.
             */
            url: string;
            /** @description Splunk's HEC token or Datadog's API key (required for those kinds; none for `https`, whose signing secret the service makes). Sealed at rest, never shown again. */
            token?: string;
        };
        UpdateAuditStreamRequest: {
            name?: string;
            /** Format: uri */
            url?: string;
            /** @description A new Splunk HEC token or Datadog API key (not for `https` streams). */
            token?: string;
        };
        AuditStream: {
            /** Format: uuid */
            id: string;
            /** @description An `AuditStreamKind`, or a kind added since: open. */
            kind: components["schemas"]["AuditStreamKind"] | string;
            name: string;
            url: string;
            /** @description `active` or `paused`, or a state added since (open). */
            status: ("active" | "paused") | string;
            /** @description Why it is paused: `admin` (someone paused it) or `failing` (the receiver failed for a day; the admins were told), or a reason added since (open); null when active. */
            pausedReason: ("admin" | "failing" | null) | string;
            /** @description Audit records recorded and not yet acknowledged by the receiver (counted up to 10,000). */
            lag: number;
            /**
             * Format: date-time
             * @description When the receiver last acknowledged a batch.
             */
            lastDeliveryAt: string | null;
            /**
             * Format: date-time
             * @description When the last record it acknowledged was recorded.
             */
            lastDeliveredRecordAt: string | null;
            /** @description The HTTP status of the last attempt (null: none, or no answer). */
            lastStatusCode: number | null;
            /** @description Why the last attempt got no answer (a timeout, a refused connection); null when it got one. */
            lastError: string | null;
            /**
             * Format: date-time
             * @description The first failure since the last success; a day of them pauses the stream.
             */
            failingSince: string | null;
            /**
             * Format: date-time
             * @description When a failed batch is tried again.
             */
            nextAttemptAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        AuditStreamCreated: {
            /** Format: uuid */
            id: string;
            /** @description As on `AuditStream` (open). */
            kind: components["schemas"]["AuditStreamKind"] | string;
            name: string;
            url: string;
            /** @description As on `AuditStream` (open). */
            status: ("active" | "paused") | string;
            /** @description As on `AuditStream` (open). */
            pausedReason: ("admin" | "failing" | null) | string;
            lag: number;
            /** Format: date-time */
            lastDeliveryAt: string | null;
            /** Format: date-time */
            lastDeliveredRecordAt: string | null;
            lastStatusCode: number | null;
            lastError: string | null;
            /** Format: date-time */
            failingSince: string | null;
            /** Format: date-time */
            nextAttemptAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description An `https` stream's signing secret (Standard Webhooks, as webhooks are signed), shown once; null for the other kinds. */
            secret: string | null;
        };
        AuditStreamList: {
            items: components["schemas"]["AuditStream"][];
        };
        AuditStreamTestResult: {
            /** @description The receiver answered 2xx. */
            delivered: boolean;
            /** @description Its HTTP status; null when it did not answer. */
            statusCode: number | null;
            /** @description Why there was no answer (timeout, refused connection, address not allowed). */
            error: string | null;
        };
        WebhookEndpointCreated: {
            /** Format: uuid */
            id: string;
            url: string;
            description: string | null;
            eventTypes: (components["schemas"]["EventType"] | string)[] | null;
            enabled: boolean;
            /** @description As on `WebhookEndpoint` (open). */
            disabledReason: ("gone" | "failing" | null) | string;
            /** Format: date-time */
            failingSince: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description The signing secret (Standard Webhooks). Shown once. */
            secret: string;
        };
        WebhookSecretRotated: {
            secret: string;
            /** Format: date-time */
            previousSecretExpiresAt: string;
        };
        WebhookEndpointList: {
            items: components["schemas"]["WebhookEndpoint"][];
        };
        WebhookDelivery: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            endpointId: string;
            eventId: string;
            /** @description An `EventType`, or an event added since (open). */
            eventType: components["schemas"]["EventType"] | string;
            /** @enum {string} */
            status: "pending" | "succeeded" | "failed";
            attempts: number;
            lastStatusCode: number | null;
            /** @description timeout, connection refused, address not allowed, … */
            lastError: string | null;
            /** Format: date-time */
            nextAttemptAt: string | null;
            /** Format: date-time */
            deliveredAt: string | null;
            /** Format: date-time */
            createdAt: string;
        };
        WebhookDeliveryList: {
            items: components["schemas"]["WebhookDelivery"][];
            nextCursor: string | null;
        };
    };
    responses: {
        /** @description The member as a SCIM User. */
        ScimUserAnswer: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimUser"];
            };
        };
        /** @description The group. */
        ScimGroupAnswer: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimGroup"];
            };
        };
        /** @description The request is not valid: a parameter or the body fails validation (`invalidValue`, or `invalidSyntax` for a body that is not JSON), a filter that does not parse or compares what this service does not keep (`invalidFilter`), a PATCH path that does not parse (`invalidPath`), an attempt to change `id` (`mutability`). */
        ScimBadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description No key, or not a live key (`WWW-Authenticate: Bearer`). */
        ScimUnauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["WwwAuthenticate"];
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description The key lacks the `scim` scope. */
        ScimForbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description No such resource in this workspace, or no such path under `/api/scim/v2` (or `/scim/v2`). */
        ScimNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description A `userName`, `externalId`, address or group name another resource holds (`uniqueness`), or a change that would leave the workspace without an active admin. */
        ScimConflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description The body is over the size limit. */
        ScimPayloadTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description The body is neither `application/scim+json` nor `application/json`. */
        ScimUnsupportedMediaType: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description Over the key's limit; `Retry-After` says when to try again. */
        ScimTooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description Something failed inside the service (no internal detail is shown). */
        ScimInternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description The database does not answer or the service is overloaded; `Retry-After` says when to try again. */
        ScimServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                "application/scim+json": components["schemas"]["ScimError"];
            };
        };
        /** @description No such webhook endpoint in the caller's workspace (`NOT_FOUND`). */
        EndpointNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The endpoint id fails validation (`VALIDATION_FAILED`). */
        EndpointIdInvalid: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description No such audit stream in the caller's workspace (`NOT_FOUND`). */
        StreamNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The stream id fails validation (`VALIDATION_FAILED`). */
        StreamIdInvalid: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description No such domain in the caller's workspace (`NOT_FOUND`). */
        DomainNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The domain id fails validation (`VALIDATION_FAILED`). */
        DomainIdInvalid: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description No such single sign-on connection in the caller's workspace (`NOT_FOUND`). */
        ConnectionNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The single sign-on did not sign anyone in (`SSO_SIGN_IN_REFUSED`, `details.reason` a short code: the state is not this browser's, used or expired; the provider's answer failed a check; the address is not vouched for at the connection's domains; or the person is not a member here — suspended members get that answer too), or the request carries an API key (`API_KEY_NOT_ALLOWED`). */
        SsoSignInRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
                /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>Your identity provider signed you in, but not with an account this workspace accepts. Ask your workspace admin to invite you.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>not_a_member</code></small></p></main></body></html> */
                "text/html": string;
            };
        };
        /** @description An internal error (`INTERNAL_ERROR`); the message never carries internal detail. A browser's navigation gets it as a page in words. */
        SsoInternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
                /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>Something went wrong on our side. Wait a moment, then start again.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>INTERNAL_ERROR</code> (500)</small></p></main></body></html> */
                "text/html": string;
            };
        };
        /** @description The database did not answer within its deadline, or the service is overloaded and sheds load (`SERVICE_UNAVAILABLE`). Nothing is wrong with the request; retry after `Retry-After` seconds. A browser's navigation gets the database's outage as a page in words. */
        SsoServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
                /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>The service is busy right now. Wait a moment, then start again.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>SERVICE_UNAVAILABLE</code></small></p></main></body></html> */
                "text/html": string;
            };
        };
        /** @description No SAML connection has this id (`SSO_CONNECTION_NOT_FOUND`). */
        SamlConnectionNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The connection id fails validation (`VALIDATION_FAILED`). */
        ConnectionIdInvalid: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description Another connection of the workspace serves one of the domains (`SSO_DOMAIN_TAKEN`); a domain serves at most one. */
        SsoDomainTaken: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The connection cannot be saved as given: a domain that is not one of the workspace's verified domains (`SSO_DOMAIN_NOT_VERIFIED`), an issuer or metadata URL the address policy refuses (`SSO_URL_NOT_ALLOWED`), a multi-tenant or unpinned Entra ID issuer (`SSO_ISSUER_NOT_ALLOWED`), a certificate that does not parse (`SSO_CERTIFICATE_INVALID`), a SAML metadata URL whose fetch (5 s deadline, 1 MiB at most) failed or did not return an IdP's metadata with an HTTP-Redirect sign-on endpoint (`SSO_METADATA_UNAVAILABLE`). `details` names the field (`in`, `field`). */
        SsoConnectionRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description A query parameter fails validation (`VALIDATION_FAILED`); `details.errors` lists the failing fields. */
        BadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description No valid session or API key (`UNAUTHENTICATED`). An operation that takes API keys says how in `WWW-Authenticate` (RFC 6750): `Bearer realm="workspace-service"`, with `error="invalid_token"` when a key was presented and is not valid (unknown, revoked, expired, or its creator is no longer an active admin). */
        Unauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["WwwAuthenticate"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The Slack signature is missing, wrong, or its timestamp is more than 5 minutes off (`SIGNATURE_INVALID`). */
        SlackSignatureInvalid: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description No such invite request in the caller's workspace (`NOT_FOUND`). */
        InviteRequestNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description No such invite link in the caller's workspace, or it is revoked (`NOT_FOUND`). */
        InviteLinkNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description No invite link has this code: unknown, revoked or regenerated (`NOT_FOUND`). */
        JoinLinkNotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The link or the confirmation has expired (`TOKEN_EXPIRED`), or was used as often as it allows (`TOKEN_USED`). */
        JoinLinkGone: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The caller's session lacks the required role (`FORBIDDEN`), or the caller's API key lacks a scope this operation needs (`INSUFFICIENT_SCOPE`: `details.missingScopes` and the `WWW-Authenticate` challenge name them). */
        ForbiddenRoleOrScope: {
            headers: {
                "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The caller's session lacks the required role (`FORBIDDEN`), the caller's API key lacks a scope this operation needs (`INSUFFICIENT_SCOPE`: `details.missingScopes` and the `WWW-Authenticate` challenge name them), or the browser says the request came from a page on another origin (`Sec-Fetch-Site` other than `same-origin` or `none`, or without it an `Origin` other than the service's; `CSRF_REJECTED`). */
        ForbiddenRoleScopeOrCrossOrigin: {
            headers: {
                "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The workspace's invite policy does not let the caller do this (`INVITE_NOT_ALLOWED`: the message says why and what to do instead, `details.invitePolicy` names the policy), the caller's API key lacks a scope this request needs (`INSUFFICIENT_SCOPE`), or the browser says the request came from a page on another origin (`CSRF_REJECTED`). */
        InviteNotAllowedScopeOrCrossOrigin: {
            headers: {
                "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The caller lacks the required role (`FORBIDDEN`), or the request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
        ForbiddenRoleOrKeyRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The caller lacks the required role (`FORBIDDEN`), the browser says the request came from a page on another origin (`CSRF_REJECTED`), or the request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
        ForbiddenRoleCrossOriginOrKeyRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The workspace's invite policy does not let the caller do this (`INVITE_NOT_ALLOWED`), the browser says the request came from a page on another origin (`CSRF_REJECTED`), or the request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
        InviteNotAllowedCrossOriginOrKeyRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The address is at a domain whose workspace signs its people in by single sign-on (`SSO_REQUIRED`: the message names the workspace and the connection, the way in, and `details` has both, `workspace` and `connection`), the browser says the request came from a page on another origin (`CSRF_REJECTED`), or the request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
        SsoRequiredCrossOriginOrKeyRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The address is at a domain whose workspace signs its people in by single sign-on (`SSO_REQUIRED`: the message names the workspace and the connection, `details` has both), it is not at one of the link's `allowedDomains` (`EMAIL_DOMAIN_NOT_ALLOWED`), the browser says the request came from a page on another origin (`CSRF_REJECTED`), or the request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
        SsoRequiredEmailDomainCrossOriginOrKeyRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The browser says the request came from a page on another origin (`Sec-Fetch-Site` other than `same-origin` or `none`, or without it an `Origin` other than the service's; `CSRF_REJECTED`), or the request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
        CrossOriginOrKeyRefused: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The caller's API key lacks a scope this operation needs (`INSUFFICIENT_SCOPE`: `details.missingScopes` and the `WWW-Authenticate` challenge name them). */
        InsufficientScope: {
            headers: {
                "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
        ApiKeyNotAllowed: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description Sign-in through an identity provider is not configured on this deployment (`IDENTITY_PROVIDER_NOT_CONFIGURED`). */
        IdentityProviderNotConfigured: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The chat platform (Slack) is not configured on this deployment (`CHAT_PLATFORM_NOT_CONFIGURED`). */
        ChatPlatformNotConfigured: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The Accept header does not allow a response type this operation produces (`NOT_ACCEPTABLE`). */
        NotAcceptable: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The token has expired or was already used (`TOKEN_EXPIRED`, `TOKEN_USED`). */
        Gone: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The body is larger than the service accepts (`PAYLOAD_TOO_LARGE`), also on operations that take no body (it is refused before it is ignored). */
        PayloadTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The body is not `application/json` (`UNSUPPORTED_MEDIA_TYPE`). */
        UnsupportedMediaType: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The Idempotency-Key was used before with a different body (`IDEMPOTENCY_KEY_REUSED`). */
        UnprocessableEntity: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description Rate limit exceeded (`RATE_LIMITED`). */
        TooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "X-RateLimit-Limit": components["headers"]["RateLimitLimit"];
                "X-RateLimit-Remaining": components["headers"]["RateLimitRemaining"];
                "X-RateLimit-Reset": components["headers"]["RateLimitReset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description An internal error (`INTERNAL_ERROR`); the message never carries internal detail. */
        InternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
        /** @description The database did not answer within its deadline, or the service is overloaded and sheds load (`SERVICE_UNAVAILABLE`). Nothing is wrong with the request or its credentials; retry after `Retry-After` seconds. */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorResponse"];
            };
        };
    };
    parameters: {
        /**
         * @description A SCIM filter (RFC 7644 §3.4.2.2).
         * @example userName eq "grace@example.com"
         */
        ScimFilter: string;
        /**
         * @description The 1-based index of the first result (below 1 is read as 1).
         * @example 1
         */
        ScimStartIndex: number;
        /**
         * @description How many results at most (0 to count only; above 100 is read as 100).
         * @example 100
         */
        ScimCount: number;
        /**
         * @description The attributes to return, comma-separated (`id` and `schemas` always are).
         * @example userName,active
         */
        ScimAttributes: string;
        /**
         * @description Attributes to leave out, comma-separated.
         * @example members
         */
        ScimExcludedAttributes: string;
        /**
         * @description The member's id (an id of no member of this workspace is 404).
         * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
         */
        ScimUserId: string;
        /**
         * @description The group's id (an id of no group of this workspace is 404).
         * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
         */
        ScimGroupId: string;
        /** @example invitation.created */
        AuditFilterAction: components["schemas"]["AuditAction"];
        /** @example invitation */
        AuditFilterTargetType: "user" | "invitation" | "api_key" | "session" | "chat_installation" | "webhook_endpoint" | "invite_request" | "workspace" | "invite_link" | "domain" | "sso_connection" | "audit_stream";
        /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
        AuditFilterTargetId: string;
        /**
         * @description Only what this person did (their e-mail, whichever door they used; case-insensitive).
         * @example ada@example.com
         */
        AuditFilterActor: string;
        /**
         * @description Only what came through this door.
         * @example web
         */
        AuditFilterSource: "api" | "mcp" | "chat" | "web" | "system" | "directory";
        /**
         * @description Only what happened at or after this moment.
         * @example 2026-11-23T00:00:00.000Z
         */
        AuditFilterSince: string;
        /**
         * @description Only what happened before this moment.
         * @example 2026-11-24T00:00:00.000Z
         */
        AuditFilterUntil: string;
        /** @example 20 */
        Limit: number;
        /**
         * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
         * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
         */
        Cursor: string;
        /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
        UserId: string;
        /** @example 9d2f6b1e-3c4a-4b5d-8e7f-0a1b2c3d4e5f */
        BatchId: string;
        /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
        InvitationId: string;
        /** @example 5b0c7a1e-2f3d-4c5b-9a8e-7d6c5b4a3f21 */
        RequestId: string;
        /** @example 9f8e7d6c-5b4a-4392-8170-6e5d4c3b2a19 */
        ApiKeyId: string;
        /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
        EndpointId: string;
        /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
        StreamId: string;
        /** @example 4d6f8a0c-1e3b-4c5d-8e7f-9a0b1c2d3e4f */
        LinkId: string;
        /**
         * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
         * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
         */
        JoinCode: string;
        /** @example 3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c */
        DomainId: string;
        /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
        ConnectionId: string;
        /**
         * @description Same key and same body replay the first answer; same key with another body is refused with 422. A key is its sender's own (the signed-in person, or the API key): another caller sending the same key runs its own request and never receives the first one's answer.
         * @example 6f1d2c3b-8a7e-4f60-9b1c-2d3e4f5a6b7c
         */
        IdempotencyKey: string;
    };
    requestBodies: never;
    headers: {
        /**
         * @description The new resource's URL, as its `meta.location` (RFC 7644 §3.3): always at the base `/api/scim/v2`, whichever base created it.
         * @example https://workspace.example.com/api/scim/v2/Users/7c9e6679-7425-40de-944b-e07fc1f90ae7
         */
        ScimLocation: string;
        /**
         * @description On operations that take API keys: the Bearer challenge (RFC 6750 §3), with `error="invalid_token"` when the key presented is not valid.
         * @example Bearer realm="workspace-service", error="invalid_token"
         */
        WwwAuthenticate: string;
        /**
         * @description With `INSUFFICIENT_SCOPE`: the Bearer challenge naming what the key lacks (RFC 6750 §3.1).
         * @example Bearer realm="workspace-service", error="insufficient_scope", scope="invitations:write"
         */
        WwwAuthenticateInsufficientScope: string;
        /**
         * @description The contract's `info.version`, on every response under `/api` (errors included): the version `/api/openapi.json` and `/api/health` report.
         * @example 1.0.0
         */
        ApiVersion: string;
        /**
         * @description The language the page is written in (its `<html lang>`): the language of the link it was opened from, else the best match of `Accept-Language`, else the workspace's default locale, else `en`.
         * @example de
         */
        ContentLanguage: string;
        /**
         * @description Another `Accept-Language` may get the page in another language.
         * @example Accept-Language
         */
        VaryAcceptLanguage: string;
        /**
         * @description Where the browser goes next.
         * @example https://workspace.example.com/
         */
        Location: string;
        /**
         * @description `service_session=<jwt>; HttpOnly; SameSite=Lax; Path=/` (plus `Secure` except on plain-http local).
         * @example service_session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzaWQiOiI0ZjJhOWMxZS04YjNkLTRlNmYtOWEwYi0xYzJkM2U0ZjVhNmIiLCJpc3MiOiJ3b3Jrc3BhY2Utc2VydmljZSIsImF1ZCI6IndvcmtzcGFjZS1zZXJ2aWNlIiwiZXhwIjoxNzY0NDkzOTU2fQ.3q0m9Zb8lVcXyT2nR5kQ1wJ7hD4fG6sA0eU8iO3pYxM; Max-Age=604800; Path=/; HttpOnly; Secure; SameSite=Lax
         */
        SetSessionCookie: string;
        /**
         * @description Seconds until a request may succeed again.
         * @example 42
         */
        RetryAfter: number;
        /**
         * @description Requests allowed in the window.
         * @example 30
         */
        RateLimitLimit: number;
        /**
         * @description Requests left in the window.
         * @example 0
         */
        RateLimitRemaining: number;
        /**
         * @description Seconds until the window resets.
         * @example 42
         */
        RateLimitReset: number;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Service and database are up. */
            200: {
                headers: {
                    "API-Version": components["headers"]["ApiVersion"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description The database does not answer, or the event loop is overloaded (`SERVICE_UNAVAILABLE`; the failing check says which). Same shape as 200, plus the ErrorResponse fields. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["RetryAfter"];
                    "API-Version": components["headers"]["ApiVersion"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthUnavailable"];
                };
            };
        };
    };
    headHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Service and database are up. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The database does not answer, or the event loop is overloaded. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getOpenapiJson: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document. */
            200: {
                headers: {
                    "API-Version": components["headers"]["ApiVersion"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getDocs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Workspace Service API reference</title>
                     *     <meta name="viewport" content="width=device-width, initial-scale=1"></head>
                     *     <body>
                     *     <script id="api-reference" data-url="/api/openapi.json"></script>
                     *     <script src="/api/docs/standalone.js"></script>
                     *     </body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getDocsScript: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description JavaScript. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /** @example /*! Scalar API reference, standalone bundle *\/ (function(){"use strict";var e=document.getElementById("api-reference");})(); */
                    "application/javascript": string;
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuthSignup: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SignupRequest"];
            };
        };
        responses: {
            /** @description User created and signed in. */
            201: {
                headers: {
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token names no usable invitation (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            /** @description An account with the invited e-mail exists already (`USER_EXISTS`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postSetup: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SetupRequest"];
            };
        };
        responses: {
            /** @description The workspace and its first admin exist; the admin is signed in. */
            201: {
                headers: {
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token is not a setup link's (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["CrossOriginOrKeyRefused"];
            /** @description A workspace exists already (`SETUP_COMPLETE`); sign in at `/login` instead. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuthInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /** @description The invitation the token names. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvitationPreview"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token names no usable invitation (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuthLoginLink: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LoginLinkRequest"];
            };
        };
        responses: {
            /** @description Accepted; a link is on its way if the address belongs to a user. */
            202: {
                headers: {
                    /**
                     * @description `login_link_browser=<random>; HttpOnly; SameSite=Strict; Path=/api/auth; Max-Age=900`: the link is bound to this browser (`POST /api/auth/login-link/preview` says whether a link is opened in the browser that asked for it). Kept when the browser has one already.
                     * @example login_link_browser=q9Vd1m3KcR8sT2wY5nB7xZ0aL4eH6jF1gU3iO8pQrSt; Max-Age=900; Path=/api/auth; HttpOnly; SameSite=Strict
                     */
                    "Set-Cookie"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Accepted"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuthLoginLinkPreview: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /** @description The account the link signs in to. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginLinkPreview"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token is unknown (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuthVerify: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /** @description Signed in. */
            200: {
                headers: {
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token is unknown (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuthLogout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Signed out; the cookie is cleared. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            403: components["responses"]["CrossOriginOrKeyRefused"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOauthLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Redirect to the identity provider's sign-in page (WorkOS AuthKit). */
            302: {
                headers: {
                    /**
                     * @description The identity provider's authorization URL, with the `state` also set in the `oauth_state` cookie.
                     * @example https://api.workos.com/user_management/authorize?client_id=client_01JD4Q6H2P3R8S9T0V1W2X3Y4Z&provider=authkit&redirect_uri=https%3A%2F%2Fworkspace.example.com%2Fapi%2Foauth%2Fcallback&response_type=code&state=3kTq0VbN8yXc2LmP5sRw7HdJ9fGe4AuZ1oIiYtKxE6M
                     */
                    Location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            403: components["responses"]["ApiKeyNotAllowed"];
            404: components["responses"]["IdentityProviderNotConfigured"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOauthCallback: {
        parameters: {
            query?: {
                /** @example 01JD4Q6H2P3R8S9T0V1W2X3Y4Z */
                code?: string;
                /** @example 3kTq0VbN8yXc2LmP5sRw7HdJ9fGe4AuZ1oIiYtKxE6M */
                state?: string;
                /** @example access_denied */
                error?: string;
                /** @example The user denied the request. */
                error_description?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Signed in; redirect to the app. */
            302: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A query parameter fails validation (`VALIDATION_FAILED`) or the sign-in attempt cannot be verified: state missing, unknown, used, expired or from another browser, or the code refused (`OAUTH_STATE_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The identity is not allowed to sign in here: e-mail not verified, account disabled, linked to another identity, or no workspace for its organization (`FORBIDDEN`, with `details.reason`); or the request carries an API key (`API_KEY_NOT_ALLOWED`). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            404: components["responses"]["IdentityProviderNotConfigured"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            /** @description The identity provider failed or timed out during the code exchange (`UPSTREAM_FAILED`). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOauthSso: {
        parameters: {
            query?: {
                /** @example ada@acme-robotics.com */
                email?: string;
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connection?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Redirect to the connection's identity provider. */
            302: {
                headers: {
                    /**
                     * @description The provider's authorization URL (OpenID Connect) or its SSO URL with the AuthnRequest and `RelayState` (SAML, HTTP-Redirect binding).
                     * @example https://acme.okta.com/oauth2/v1/authorize?client_id=0oa1b2c3d4&scope=openid+email+profile&response_type=code&redirect_uri=https%3A%2F%2Fworkspace.example.com%2Fapi%2Foauth%2Fsso%2Fcallback&state=3kTq0VbN8yXc2LmP5sRw7HdJ9fGe4AuZ1oIiYtKxE6M&nonce=q2W8eRt5yU1iO9pA3sD7fG4hJ6kL0zX&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256
                     */
                    Location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A query parameter fails validation, or neither `email` nor `connection` is given (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>This sign-in link is incomplete or damaged. Go back to the sign-in page and start again.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>VALIDATION_FAILED</code></small></p></main></body></html> */
                    "text/html": string;
                };
            };
            /** @description A test sign-in (`connection`) without a valid session (`UNAUTHENTICATED`). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>Your session has ended. Sign in as a workspace admin, then start the test sign-in again.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>UNAUTHENTICATED</code></small></p></main></body></html> */
                    "text/html": string;
                };
            };
            /** @description A test sign-in by a member, not an admin (`FORBIDDEN`), or the request carries an API key (`API_KEY_NOT_ALLOWED`). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>Only a workspace admin can test a single sign-on connection.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>FORBIDDEN</code></small></p></main></body></html> */
                    "text/html": string;
                };
            };
            /** @description No connection serves the address's domain (`SSO_CONNECTION_NOT_FOUND`), or the admin's workspace has no such connection (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>Your address does not sign in with single sign-on here. Go back to the sign-in page to get a sign-in link by e-mail instead.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>SSO_CONNECTION_NOT_FOUND</code></small></p></main></body></html> */
                    "text/html": string;
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["SsoInternalError"];
            /** @description The connection's identity provider could not be reached or its discovery document is not usable (`UPSTREAM_FAILED`). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>Your company&#39;s single sign-on is not working right now. Try again in a few minutes; if it keeps happening, contact your workspace admin.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>UPSTREAM_FAILED</code></small></p></main></body></html> */
                    "text/html": string;
                };
            };
            503: components["responses"]["SsoServiceUnavailable"];
        };
    };
    getOauthSsoCallback: {
        parameters: {
            query?: {
                /** @example 8xLOxBtZp8 */
                code?: string;
                /** @example 3kTq0VbN8yXc2LmP5sRw7HdJ9fGe4AuZ1oIiYtKxE6M */
                state?: string;
                /** @example https://acme.okta.com */
                iss?: string;
                /** @example access_denied */
                error?: string;
                /** @example The user denied the request. */
                error_description?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An admin's test sign-in (`GET /api/oauth/sso?connection=`): the claims received; no one is signed in. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "connectionId": "5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d",
                     *       "protocol": "oidc",
                     *       "issuer": "https://acme.okta.com",
                     *       "subject": "00u1a2b3c4d5e6f7g8h9",
                     *       "email": "ada@acme-robotics.com",
                     *       "emailVerified": true,
                     *       "claims": {
                     *         "name": [
                     *           "Ada Lovelace"
                     *         ]
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["SsoTestSignIn"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test sign-in succeeded — nobody was signed in</title></head><body><main><h1>Test sign-in succeeded — nobody was signed in</h1><dl><dt>Connection</dt><dd>5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d (OpenID Connect)</dd><dt>Issuer</dt><dd>https://acme.okta.com</dd><dt>Subject</dt><dd>00u1a2b3c4d5e6f7g8h9</dd><dt>E-mail</dt><dd>ada@acme-robotics.com</dd><dt>E-mail verified</dt><dd>Yes</dd></dl><h2>Claims</h2><dl><dt>name</dt><dd><span>Ada Lovelace</span></dd></dl></main></body></html> */
                    "text/html": string;
                };
            };
            /** @description Signed in; redirect to the app. */
            302: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A query parameter fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoSignInRefused"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["SsoInternalError"];
            503: components["responses"]["SsoServiceUnavailable"];
        };
    };
    getOauthSlackInstall: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Redirect to Slack's install page, or to `/login` for a browser without a session. */
            302: {
                headers: {
                    /** @description Slack's authorization URL (the `state` is also set in the `slack_oauth_state` cookie), or `/login`. */
                    Location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            403: components["responses"]["ForbiddenRoleOrKeyRefused"];
            404: components["responses"]["ChatPlatformNotConfigured"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOauthSlackCallback: {
        parameters: {
            query?: {
                /** @example 4711318306754.8114752304391.3f0b8a1c9d2e4f6a8b0c1d2e3f4a5b6c */
                code?: string;
                /** @example 9hYw2KqL5mRt8VbX1cZn4DfG7jPs0AeU3oWiTyQkM6E */
                state?: string;
                /** @example access_denied */
                error?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Installed; redirect to the app. */
            302: {
                headers: {
                    /**
                     * @description The app (`APP_URL`).
                     * @example https://workspace.example.com
                     */
                    Location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A query parameter fails validation (`VALIDATION_FAILED`) or the install cannot be verified: state missing, unknown, used, expired or from another browser, or not approved at Slack (`OAUTH_STATE_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["ApiKeyNotAllowed"];
            404: components["responses"]["ChatPlatformNotConfigured"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            /** @description Slack's `oauth.v2.access` failed or timed out (`UPSTREAM_FAILED`). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postSlackEvents: {
        parameters: {
            query?: never;
            header?: {
                /** @example 1 */
                "X-Slack-Retry-Num"?: string;
                /** @example http_timeout */
                "X-Slack-Retry-Reason"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SlackEnvelope"];
            };
        };
        responses: {
            /** @description Acknowledged (or the url_verification challenge). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SlackAck"];
                };
            };
            /** @description The envelope fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["SlackSignatureInvalid"];
            403: components["responses"]["ApiKeyNotAllowed"];
            404: components["responses"]["ChatPlatformNotConfigured"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postSlackCommands: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-www-form-urlencoded": components["schemas"]["SlackCommand"];
            };
        };
        responses: {
            /** @description Acknowledged with an ephemeral message (the outcome follows on `response_url`). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SlackCommandAck"];
                };
            };
            /** @description The form fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["SlackSignatureInvalid"];
            403: components["responses"]["ApiKeyNotAllowed"];
            404: components["responses"]["ChatPlatformNotConfigured"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postSlackInteractions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-www-form-urlencoded": components["schemas"]["SlackInteraction"];
            };
        };
        responses: {
            /** @description Acknowledged; for a modal, `{}` closes it and `response_action: errors` keeps it open with the errors shown. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SlackInteractionAck"];
                };
            };
            /** @description The form fails validation, or `payload` is not a JSON object with a `type` (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["SlackSignatureInvalid"];
            403: components["responses"]["ApiKeyNotAllowed"];
            404: components["responses"]["ChatPlatformNotConfigured"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postEmailEventsResend: {
        parameters: {
            query?: never;
            header?: {
                /** @example msg_2pLoBq6Kp8TQbWm4gq1rT9eXz3N */
                "svix-id"?: string;
                /** @example 1763891232 */
                "svix-timestamp"?: string;
                /** @example v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= */
                "svix-signature"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResendEmailEvent"];
            };
        };
        responses: {
            /** @description Acknowledged; what it did. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EmailEventAck"];
                };
            };
            /** @description The event fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The signature is missing, wrong or stale, or no `RESEND_WEBHOOK_SECRET` is set (`SIGNATURE_INVALID`). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["CrossOriginOrKeyRefused"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorkspaceSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The settings. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceSettings"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchWorkspaceSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WorkspaceSettingsPatch"];
            };
        };
        responses: {
            /** @description The settings after the change. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceSettings"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorkspaceBranding: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The look. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceBranding"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchWorkspaceBranding: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WorkspaceBrandingPatch"];
            };
        };
        responses: {
            /** @description The look after the change. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceBranding"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            /** @description The accent colour does not reach 4.5:1 against white (`ACCENT_COLOR_CONTRAST_TOO_LOW`); nothing is changed. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putWorkspaceBrandingLogo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /** @example (PNG bytes: 89 50 4E 47 0D 0A 1A 0A) */
                "image/png": unknown;
                /** @example (JPEG bytes: FF D8 FF … FF D9) */
                "image/jpeg": unknown;
                /** @example (WebP bytes: RIFF … WEBP VP8) */
                "image/webp": unknown;
            };
        };
        responses: {
            /** @description The look with the new logo. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceBranding"];
                };
            };
            /** @description No body (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description The file is larger than 204800 bytes (`PAYLOAD_TOO_LARGE`). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Not sent as `image/png`, `image/jpeg` or `image/webp` (`LOGO_TYPE_UNSUPPORTED`). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The file is not a PNG, JPEG or WebP image, or not the type it was sent as (`LOGO_NOT_ACCEPTED`); the logo is unchanged. `details.reason`: `svg` ("This is an SVG image; upload a PNG, JPEG or WebP"), `not_an_image` ("This file is not a PNG, JPEG or WebP image"), `type_mismatch` with `details.detectedType` ("This file is a JPEG image, not image/png: send it as image/jpeg"). */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWorkspaceBrandingLogo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The look without a logo. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceBranding"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWorkspaceSlack: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Uninstalled; the bot token is revoked and deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description The service is not set up for Slack (`CHAT_PLATFORM_NOT_CONFIGURED`), or the app is not installed in this workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            /** @description Slack's `auth.revoke` failed or timed out (`UPSTREAM_FAILED`); the installation is kept. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getInviteRequests: {
        parameters: {
            query?: {
                /** @example pending */
                status?: components["schemas"]["InviteRequestStatus"];
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of invite requests. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteRequestList"];
                };
            };
            /** @description A query parameter fails validation, or the cursor was not issued by this list (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postInviteRequests: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["InviteUserRequest"];
            };
        };
        responses: {
            /** @description The address already has a pending request (maybe another member's); it is answered as it is. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteRequest"];
                };
            };
            /** @description Asked; the admins are told (Slack, the console, the `invite_request.created` event). */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteRequest"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InviteNotAllowedCrossOriginOrKeyRefused"];
            /** @description The address is a member's already (`USER_EXISTS`; `MEMBER_SUSPENDED` for a suspended member), or the caller has as many pending requests as one member may (`INVITE_REQUEST_LIMIT_REACHED`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getInviteRequestsMine: {
        parameters: {
            query?: {
                /** @example pending */
                status?: components["schemas"]["InviteRequestStatus"];
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the caller's invite requests. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteRequestList"];
                };
            };
            /** @description A query parameter fails validation, or the cursor was not issued by this list (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ApiKeyNotAllowed"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postInviteRequestsRequestIdApprove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5b0c7a1e-2f3d-4c5b-9a8e-7d6c5b4a3f21 */
                requestId: components["parameters"]["RequestId"];
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ApproveInviteRequest"];
            };
        };
        responses: {
            /** @description Approved; the invitation was sent. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApprovedInviteRequest"];
                };
            };
            /** @description The request id or body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["InviteRequestNotFound"];
            /** @description The request was already decided or has expired (`INVITE_REQUEST_NOT_PENDING`), or its e-mail has become a user (`USER_EXISTS`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postInviteRequestsRequestIdDeny: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5b0c7a1e-2f3d-4c5b-9a8e-7d6c5b4a3f21 */
                requestId: components["parameters"]["RequestId"];
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["DenyInviteRequest"];
            };
        };
        responses: {
            /** @description The denied request. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteRequest"];
                };
            };
            /** @description The request id or body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["InviteRequestNotFound"];
            /** @description The request was already decided or has expired (`INVITE_REQUEST_NOT_PENDING`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getInviteLinks: {
        parameters: {
            query?: {
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of invite links, revoked and expired ones included. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteLinkList"];
                };
            };
            /** @description A query parameter fails validation, or the cursor was not issued by this list (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postInviteLinks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateInviteLinkRequest"];
            };
        };
        responses: {
            /** @description Created. Share `url` now; it is never shown again (regenerate for a new one). */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteLinkCreated"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`); an `admin` role is refused here. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteInviteLinksLinkId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 4d6f8a0c-1e3b-4c5d-8e7f-9a0b1c2d3e4f */
                linkId: components["parameters"]["LinkId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The revoked link. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteLink"];
                };
            };
            /** @description The link id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["InviteLinkNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postInviteLinksLinkIdRegenerate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 4d6f8a0c-1e3b-4c5d-8e7f-9a0b1c2d3e4f */
                linkId: components["parameters"]["LinkId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The link with its new URL (shown once). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteLinkCreated"];
                };
            };
            /** @description The link id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["InviteLinkNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postJoinCode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
                 * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
                 */
                code: components["parameters"]["JoinCode"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JoinRequest"];
            };
        };
        responses: {
            /** @description Accepted; a confirmation link is on its way to the address. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Accepted"];
                };
            };
            /** @description The body or code fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredEmailDomainCrossOriginOrKeyRefused"];
            404: components["responses"]["JoinLinkNotFound"];
            410: components["responses"]["JoinLinkGone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postJoinCodeConfirm: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
                 * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
                 */
                code: components["parameters"]["JoinCode"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /** @description Joined and signed in. */
            201: {
                headers: {
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description The link needs approval; an invite request was made for the admins. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Accepted"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token is unknown (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredEmailDomainCrossOriginOrKeyRefused"];
            404: components["responses"]["JoinLinkNotFound"];
            /** @description The address already belongs to an account (`USER_EXISTS`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            410: components["responses"]["JoinLinkGone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postJoinCodeConfirmPreview: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
                 * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
                 */
                code: components["parameters"]["JoinCode"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /** @description What confirming does. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JoinConfirmationPreview"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token is unknown (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            404: components["responses"]["JoinLinkNotFound"];
            410: components["responses"]["JoinLinkGone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorkspace: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The workspace. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceSummary"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InsufficientScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUsersMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The current user. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ApiKeyNotAllowed"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchUsersMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["MeUpdate"];
            };
        };
        responses: {
            /** @description The current user after the change. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description The browser says the request came from a page on another origin (`CSRF_REJECTED`), or the request carries an API key, which this operation never takes (`API_KEY_NOT_ALLOWED`). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUsersMeNotifications: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The admin's choice. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotificationSettings"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrKeyRefused"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putUsersMeNotifications: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NotificationSettings"];
            };
        };
        responses: {
            /** @description The admin's choice after the change. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotificationSettings"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleCrossOriginOrKeyRefused"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUsers: {
        parameters: {
            query?: {
                /**
                 * @description The start of an e-mail address or of a name.
                 * @example ada
                 */
                q?: string;
                /** @example admin */
                role?: components["schemas"]["Role"];
                /** @example suspended */
                status?: components["schemas"]["MemberStatus"];
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of members, oldest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserList"];
                };
            };
            /** @description A query parameter fails validation, or the cursor was not issued by this list (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postUsersInvite: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Same key and same body replay the first answer; same key with another body is refused with 422. A key is its sender's own (the signed-in person, or the API key): another caller sending the same key runs its own request and never receives the first one's answer.
                 * @example 6f1d2c3b-8a7e-4f60-9b1c-2d3e4f5a6b7c
                 */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["InviteUserRequest"];
            };
        };
        responses: {
            /** @description Invitation sent. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteUserResponse"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["InviteNotAllowedScopeOrCrossOrigin"];
            /** @description A user with this e-mail exists (`USER_EXISTS`; `MEMBER_SUSPENDED` when it is a suspended member of the workspace, who is reactivated rather than invited), or a request with the same `Idempotency-Key` is still running (`IDEMPOTENCY_KEY_IN_USE`; retry after it finished). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UnprocessableEntity"];
            429: components["responses"]["TooManyRequests"];
            /** @description Sending the e-mail failed (`EMAIL_SEND_FAILED`; the invitation is kept and retrying the request re-sends it), or an internal error (`INTERNAL_ERROR`). */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUsersUserId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The member. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description The user id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description No such user in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteUsersUserId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The user id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description No such user in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The user is the workspace's last admin (`LAST_ADMIN`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchUsersUserId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateUserRequest"];
            };
        };
        responses: {
            /** @description The updated member. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description The user id or the body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description No such user in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The change would leave the workspace without an admin (`LAST_ADMIN`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postUsersUserIdSuspend: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The member, suspended. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description The user id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description No such user in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The member is the workspace's last active admin (`LAST_ADMIN`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postUsersUserIdReactivate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7c9e6679-7425-40de-944b-e07fc1f90ae7 */
                userId: components["parameters"]["UserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The member, active. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description The user id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description As for every admin operation (`FORBIDDEN`, `INSUFFICIENT_SCOPE`, `CSRF_REJECTED`), or the member's company directory deactivated them (`MANAGED_BY_DIRECTORY`): the directory alone reactivates them, so that it and the service agree. */
            403: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WwwAuthenticateInsufficientScope"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No such user in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getInvitations: {
        parameters: {
            query?: {
                /** @example pending */
                status?: components["schemas"]["InvitationStatus"];
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of invitations. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvitationList"];
                };
            };
            /** @description A query parameter fails validation, or the cursor was not issued by this list (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getInvitationsFunnel: {
        parameters: {
            query?: {
                /**
                 * @description The period's start (inclusive); default 30 days before `until`.
                 * @example 2026-11-01T00:00:00.000Z
                 */
                since?: string;
                /**
                 * @description The period's end (exclusive); default now.
                 * @example 2026-12-01T00:00:00.000Z
                 */
                until?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The counts. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvitationFunnel"];
                };
            };
            /** @description A query parameter fails validation, or `since` is not before `until` (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postInvitationsInvitationIdResend: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
                invitationId: components["parameters"]["InvitationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Re-sent. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InviteUserResponse"];
                };
            };
            /** @description The invitation id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description No such invitation in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The invitation is no longer pending (`INVITATION_NOT_PENDING`), or its e-mail has become a user (`USER_EXISTS`; `MEMBER_SUSPENDED` for a suspended member). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteInvitationsInvitationId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
                invitationId: components["parameters"]["InvitationId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The revoked invitation. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Invitation"];
                };
            };
            /** @description The invitation id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description No such invitation in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The invitation is no longer pending (`INVITATION_NOT_PENDING`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postInvitationsBatch: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Same key and same body replay the first answer; same key with another body is refused with 422. A key is its sender's own (the signed-in person, or the API key): another caller sending the same key runs its own request and never receives the first one's answer.
                 * @example 6f1d2c3b-8a7e-4f60-9b1c-2d3e4f5a6b7c
                 */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["InviteBatchRequest"];
            };
        };
        responses: {
            /** @description A small batch (at most 25 rows), with every row's result. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvitationBatch"];
                };
            };
            /** @description A larger batch, accepted; its rows' results are known, their e-mails are on their way. `Location` is the batch resource to follow. */
            202: {
                headers: {
                    /**
                     * @description The batch resource (`/api/invitation-batches/{batchId}`).
                     * @example /api/invitation-batches/9d2f6b1e-3c4a-4b5d-8e7f-0a1b2c3d4e5f
                     */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvitationBatch"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`), for example more than 1,000 rows. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description A request with the same `Idempotency-Key` is still running (`IDEMPOTENCY_KEY_IN_USE`; retry after it finished). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UnprocessableEntity"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getInvitationBatchesBatchId: {
        parameters: {
            query?: {
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path: {
                /** @example 9d2f6b1e-3c4a-4b5d-8e7f-0a1b2c3d4e5f */
                batchId: components["parameters"]["BatchId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The batch and a page of its rows. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InvitationBatch"];
                };
            };
            /** @description The batch id or a query parameter fails validation, or the cursor was not issued by this batch (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            /** @description No such batch in the caller's workspace, or it completed more than `RETENTION_BATCHES_DAYS` ago (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAuditEvents: {
        parameters: {
            query?: {
                /** @example invitation.created */
                action?: components["parameters"]["AuditFilterAction"];
                /** @example invitation */
                targetType?: components["parameters"]["AuditFilterTargetType"];
                /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
                targetId?: components["parameters"]["AuditFilterTargetId"];
                /**
                 * @description Only what this person did (their e-mail, whichever door they used; case-insensitive).
                 * @example ada@example.com
                 */
                actor?: components["parameters"]["AuditFilterActor"];
                /**
                 * @description Only what came through this door.
                 * @example web
                 */
                source?: components["parameters"]["AuditFilterSource"];
                /**
                 * @description Only what happened at or after this moment.
                 * @example 2026-11-23T00:00:00.000Z
                 */
                since?: components["parameters"]["AuditFilterSince"];
                /**
                 * @description Only what happened before this moment.
                 * @example 2026-11-24T00:00:00.000Z
                 */
                until?: components["parameters"]["AuditFilterUntil"];
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of audit events. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditEventList"];
                };
            };
            /** @description A query parameter fails validation, or the cursor was not issued by this list (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAuditEventsExport: {
        parameters: {
            query?: {
                /** @example invitation.created */
                action?: components["parameters"]["AuditFilterAction"];
                /** @example invitation */
                targetType?: components["parameters"]["AuditFilterTargetType"];
                /** @example a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d */
                targetId?: components["parameters"]["AuditFilterTargetId"];
                /**
                 * @description Only what this person did (their e-mail, whichever door they used; case-insensitive).
                 * @example ada@example.com
                 */
                actor?: components["parameters"]["AuditFilterActor"];
                /**
                 * @description Only what came through this door.
                 * @example web
                 */
                source?: components["parameters"]["AuditFilterSource"];
                /**
                 * @description Only what happened at or after this moment.
                 * @example 2026-11-23T00:00:00.000Z
                 */
                since?: components["parameters"]["AuditFilterSince"];
                /**
                 * @description Only what happened before this moment.
                 * @example 2026-11-24T00:00:00.000Z
                 */
                until?: components["parameters"]["AuditFilterUntil"];
                /**
                 * @description Resume after this record (the `id` of the last line of a cut export).
                 * @example 01a207cc-40fb-70b2-8f61-2c9d4e7a3b50
                 */
                after?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The records, streamed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {"id":"01a207cc-40fb-70b2-8f61-2c9d4e7a3b50","action":"invitation.created","actor":{"type":"api_key","id":"9f8e7d6c-5b4a-4392-8170-6e5d4c3b2a19","label":"ada@example.com"},"source":"mcp","target":{"type":"invitation","id":"a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"},"payload":{"email":"alan@example.com","role":"member"},"createdAt":"2026-11-23T09:45:56.219Z"}
                     *     {"id":"01a20e5b-7727-71a4-9c3e-5d2b8f0a6e71","action":"invitation.revoked","actor":{"type":"user","id":"0d3b7a52-9c1e-4f6a-8b2d-3e4f5a6b7c8d","label":"ada@example.com"},"source":"web","target":{"type":"invitation","id":"a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"},"payload":{"email":"alan@example.com"},"createdAt":"2026-11-24T16:20:05.031Z"}
                     */
                    "application/x-ndjson": string;
                    /**
                     * @example id,createdAt,action,actorType,actorId,actorLabel,source,targetType,targetId,payload
                     *     "01a207cc-40fb-70b2-8f61-2c9d4e7a3b50","2026-11-23T09:45:56.219Z","invitation.created","api_key","9f8e7d6c-5b4a-4392-8170-6e5d4c3b2a19","ada@example.com","mcp","invitation","a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d","{""email"":""alan@example.com"",""role"":""member""}"
                     */
                    "text/csv": string;
                };
            };
            /** @description A query parameter fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            406: components["responses"]["NotAcceptable"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAuditEventsSigningKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The keys. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "items": [
                     *         {
                     *           "kid": "audit-2026-12-07-3f2a9c1d",
                     *           "kty": "OKP",
                     *           "crv": "Ed25519",
                     *           "alg": "EdDSA",
                     *           "use": "sig",
                     *           "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
                     *           "createdAt": "2026-12-07T21:05:00.112Z",
                     *           "retiredAt": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["AuditSigningKeyList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAuditEventsDigests: {
        parameters: {
            query?: {
                /**
                 * @description Only what happened at or after this moment.
                 * @example 2026-11-23T00:00:00.000Z
                 */
                since?: components["parameters"]["AuditFilterSince"];
                /**
                 * @description Only what happened before this moment.
                 * @example 2026-11-24T00:00:00.000Z
                 */
                until?: components["parameters"]["AuditFilterUntil"];
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of digests. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "items": [
                     *         {
                     *           "workspaceId": "5b0c1f4e-2d7a-4c8e-9f10-3a4b5c6d7e8f",
                     *           "hour": "2026-12-07T20:00:00.000Z",
                     *           "firstSequence": 1,
                     *           "lastSequence": 42,
                     *           "firstId": "01a207cc-40fb-70b2-8f61-2c9d4e7a3b50",
                     *           "lastId": "01a20e5b-7727-71a4-9c3e-5d2b8f0a6e71",
                     *           "count": 42,
                     *           "lastHash": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                     *           "previousDigestHash": null,
                     *           "digestHash": "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
                     *           "kid": "audit-2026-12-07-3f2a9c1d",
                     *           "signature": "3ZJxXGm2mDq8nV0oR8pPZ9bq1xK1c6tq2w6c3P0vJ6ZqO5kqH4Q1tB3oQ2Kx7a9v8mE6XyY2wJ1uV0sT9rQ8Bg"
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["AuditDigestList"];
                };
            };
            /** @description A query parameter fails validation, or the cursor was not issued by this list (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The keys, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrKeyRefused"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateApiKeyRequest"];
            };
        };
        responses: {
            /** @description Created. Store `secret` now; it is never shown again. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyCreated"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleCrossOriginOrKeyRefused"];
            /**
             * @description The workspace already holds `API_KEYS_PER_WORKSPACE` live keys (default 10;
             *     `API_KEY_LIMIT_REACHED`). Each key has its own MCP rate limit, so the cap bounds a
             *     workspace's MCP calls per minute; revoking a key frees its place.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteApiKeysApiKeyId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 9f8e7d6c-5b4a-4392-8170-6e5d4c3b2a19 */
                apiKeyId: components["parameters"]["ApiKeyId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The key id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleCrossOriginOrKeyRefused"];
            /** @description No such key in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getEvents: {
        parameters: {
            query?: {
                /**
                 * @description `nextCursor` of a previous page of this feed.
                 * @example MjAyNi0xMS0yM1QxMDowMjoxMS44MDRafDQy
                 */
                after?: string;
                /**
                 * @description Only these event types (repeat the parameter, `?types=a&types=b`).
                 * @example [
                 *       "invitation.created",
                 *       "invitation.accepted"
                 *     ]
                 */
                types?: components["schemas"]["EventType"][];
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events, oldest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventList"];
                };
            };
            /** @description A query parameter fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWebhookEndpoints: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoints, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postWebhookEndpoints: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateWebhookEndpointRequest"];
            };
        };
        responses: {
            /** @description Created. Store `secret` now; it is never shown again. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointCreated"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the URL is not allowed (`WEBHOOK_URL_NOT_ALLOWED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhookEndpointsEndpointId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["EndpointIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["EndpointNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchWebhookEndpointsEndpointId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateWebhookEndpointRequest"];
            };
        };
        responses: {
            /** @description The endpoint as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            /** @description The body or id fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the URL is not allowed (`WEBHOOK_URL_NOT_ALLOWED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["EndpointNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postWebhookEndpointsEndpointIdRotateSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The new secret, and until when the previous one also signs. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSecretRotated"];
                };
            };
            400: components["responses"]["EndpointIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["EndpointNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postWebhookEndpointsEndpointIdTest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Queued; the answer is the new delivery (pending until the first attempt). */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            400: components["responses"]["EndpointIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["EndpointNotFound"];
            /** @description The endpoint is disabled; enable it first (`WEBHOOK_ENDPOINT_DISABLED`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWebhookEndpointsEndpointIdDeliveries: {
        parameters: {
            query?: {
                /** @example failed */
                status?: "pending" | "succeeded" | "failed";
                /** @example 20 */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous page's `nextCursor` of the same list (base64url). Anything else is 400 `VALIDATION_FAILED` naming `query` `cursor`.
                 * @example MjAyNi0xMS0wOVQxNDowMjozMS41MTJafDdjOWU2Njc5LTc0MjUtNDBkZS05NDRiLWUwN2ZjMWY5MGFlNw
                 */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: never;
            path: {
                /** @example 2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a3b5c7d */
                endpointId: components["parameters"]["EndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            /** @description A parameter fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            404: components["responses"]["EndpointNotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postWebhookDeliveriesDeliveryIdRetry: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d */
                deliveryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Queued; the delivery is pending again. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            /** @description The id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description No such delivery in the caller's workspace (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The endpoint is disabled; enable it first (`WEBHOOK_ENDPOINT_DISABLED`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAuditStreams: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The streams, newest first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditStreamList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuditStreams: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateAuditStreamRequest"];
            };
        };
        responses: {
            /** @description Created. For an `https` stream, store `secret` now; it is never shown again. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditStreamCreated"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`; a `splunk` or `datadog` stream needs a `token`) or the URL is not allowed (`WEBHOOK_URL_NOT_ALLOWED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAuditStreamsStreamId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditStream"];
                };
            };
            400: components["responses"]["StreamIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            404: components["responses"]["StreamNotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteAuditStreamsStreamId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["StreamIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["StreamNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchAuditStreamsStreamId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateAuditStreamRequest"];
            };
        };
        responses: {
            /** @description The stream as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditStream"];
                };
            };
            /** @description The body or id fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the URL is not allowed (`WEBHOOK_URL_NOT_ALLOWED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["StreamNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuditStreamsStreamIdTest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description What the receiver answered (a refusal is still 200; `delivered` is false). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditStreamTestResult"];
                };
            };
            400: components["responses"]["StreamIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["StreamNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuditStreamsStreamIdPause: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream, paused. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditStream"];
                };
            };
            400: components["responses"]["StreamIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["StreamNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postAuditStreamsStreamIdResume: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6d1c9b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d */
                streamId: components["parameters"]["StreamId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream, active. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditStream"];
                };
            };
            400: components["responses"]["StreamIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["StreamNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getDomains: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The domains. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DomainList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postDomains: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateDomainRequest"];
            };
        };
        responses: {
            /** @description Added, pending; publish the `verification` record. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domain"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the domain cannot be added (`DOMAIN_NOT_ALLOWED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            /** @description The workspace has the domain already (`DOMAIN_EXISTS`), another workspace verified it (`DOMAIN_CLAIMED`), or the workspace has 50 domains (`DOMAIN_LIMIT_REACHED`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getDomainsDomainId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c */
                domainId: components["parameters"]["DomainId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The domain. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domain"];
                };
            };
            400: components["responses"]["DomainIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            404: components["responses"]["DomainNotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteDomainsDomainId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c */
                domainId: components["parameters"]["DomainId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["DomainIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["DomainNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchDomainsDomainId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c */
                domainId: components["parameters"]["DomainId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateDomainRequest"];
            };
        };
        responses: {
            /** @description The domain as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domain"];
                };
            };
            /** @description The body or id fails validation (`VALIDATION_FAILED`, `INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["DomainNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postDomainsDomainIdVerify: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c */
                domainId: components["parameters"]["DomainId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The domain after the look; `status` says whether the record was found. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Domain"];
                };
            };
            400: components["responses"]["DomainIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["DomainNotFound"];
            /** @description Another workspace verified the domain (`DOMAIN_CLAIMED`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postDomainJoinsPreview: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /** @description What the link does. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DomainJoinPreview"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token is unknown, or the domain no longer lets anyone join (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postDomainJoins: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SignupRequest"];
            };
        };
        responses: {
            /** @description Joined (`auto_join`) and signed in. */
            201: {
                headers: {
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            /** @description Asked (`suggest`); the admins decide. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Accepted"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`) or the token is unknown, or the domain no longer lets anyone join (`TOKEN_INVALID`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoRequiredCrossOriginOrKeyRefused"];
            /** @description The address has an account already (`USER_EXISTS`). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSsoConnections: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The connections. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SsoConnectionList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postSsoConnections: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateSsoConnectionRequest"];
            };
        };
        responses: {
            /** @description Created. Paste the answer's `redirectUri` (OIDC) or `spEntityId` and `acsUrl` (SAML) into the provider. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SsoConnection"];
                };
            };
            /** @description The body fails validation (`VALIDATION_FAILED`, `INVALID_JSON`), including the settings of the other protocol or none for its own. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            409: components["responses"]["SsoDomainTaken"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["SsoConnectionRefused"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSsoConnectionsConnectionId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The connection. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SsoConnection"];
                };
            };
            400: components["responses"]["ConnectionIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleOrScope"];
            404: components["responses"]["ConnectionNotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteSsoConnectionsConnectionId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["ConnectionIdInvalid"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["ConnectionNotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchSsoConnectionsConnectionId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateSsoConnectionRequest"];
            };
        };
        responses: {
            /** @description The connection as it is now. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SsoConnection"];
                };
            };
            /** @description The body or id fails validation (`VALIDATION_FAILED`, `INVALID_JSON`), including settings of the other protocol. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ForbiddenRoleScopeOrCrossOrigin"];
            404: components["responses"]["ConnectionNotFound"];
            409: components["responses"]["SsoDomainTaken"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["SsoConnectionRefused"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSsoConnectionsConnectionIdSamlMetadata: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The SP metadata. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /** @example <?xml version="1.0"?><EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://workspace.example.com/api/sso/connections/5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d/saml/metadata"><SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false" WantAssertionsSigned="true"><AssertionConsumerService index="1" isDefault="true" Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://workspace.example.com/api/sso/connections/5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d/saml/acs"/></SPSSODescriptor></EntityDescriptor> */
                    "application/samlmetadata+xml": string;
                };
            };
            400: components["responses"]["ConnectionIdInvalid"];
            404: components["responses"]["SamlConnectionNotFound"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postSsoConnectionsConnectionIdSamlAcs: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d */
                connectionId: components["parameters"]["ConnectionId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "SAMLResponse": "PHNhbWxwOlJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM6bmFtZXM6dGM6U0FNTDoyLjA6cHJvdG9jb2wiLz4=",
                 *       "RelayState": "3kTq0VbN8yXc2LmP5sRw7HdJ9fGe4AuZ1oIiYtKxE6M"
                 *     }
                 */
                "application/x-www-form-urlencoded": components["schemas"]["SamlAcsForm"];
            };
        };
        responses: {
            /** @description An admin's test sign-in (`GET /api/oauth/sso?connection=`): the assertion's subject and attributes; no one is signed in. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "connectionId": "5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d",
                     *       "protocol": "saml",
                     *       "issuer": "http://www.okta.com/exk1a2b3c4d5e6f7g8h9",
                     *       "subject": "ada@acme-robotics.com",
                     *       "email": "ada@acme-robotics.com",
                     *       "emailVerified": true,
                     *       "claims": {
                     *         "email": [
                     *           "ada@acme-robotics.com"
                     *         ],
                     *         "displayName": [
                     *           "Ada Lovelace"
                     *         ]
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["SsoTestSignIn"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test sign-in succeeded — nobody was signed in</title></head><body><main><h1>Test sign-in succeeded — nobody was signed in</h1><dl><dt>Connection</dt><dd>5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d (SAML 2.0)</dd><dt>Issuer</dt><dd>http://www.okta.com/exk1a2b3c4d5e6f7g8h9</dd><dt>Subject</dt><dd>ada@acme-robotics.com</dd><dt>E-mail</dt><dd>ada@acme-robotics.com</dd><dt>E-mail verified</dt><dd>Yes</dd></dl><h2>Claims</h2><dl><dt>displayName</dt><dd><span>Ada Lovelace</span></dd></dl></main></body></html> */
                    "text/html": string;
                };
            };
            /** @description Signed in: a redirect to the app with the session cookie. Or, for an IdP-initiated response where the connection allows it (`saml.idpInitiated`): a redirect to the provider with a fresh AuthnRequest, and this sign-in's state cookie instead (the response itself is not believed). */
            302: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Set-Cookie": components["headers"]["SetSessionCookie"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The form or the connection id fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            403: components["responses"]["SsoSignInRefused"];
            /** @description No SAML connection has this id (`SSO_CONNECTION_NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                    /** @example <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in did not work</title></head><body><main><h1>Sign-in did not work</h1><p>Your address does not sign in with single sign-on here. Go back to the sign-in page to get a sign-in link by e-mail instead.</p><p><a href="/login">Back to the sign-in page</a></p><p class="muted"><small>For support: <code>SSO_CONNECTION_NOT_FOUND</code></small></p></main></body></html> */
                    "text/html": string;
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["SsoInternalError"];
            503: components["responses"]["SsoServiceUnavailable"];
        };
    };
    getMcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Only POST is supported (`METHOD_NOT_ALLOWED`). */
            405: {
                headers: {
                    /**
                     * @description The methods this path answers.
                     * @example POST
                     */
                    Allow?: "POST";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postMcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JsonRpcMessage"];
            };
        };
        responses: {
            /** @description JSON-RPC response(s), as JSON or as a server-sent event stream. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcMessage"];
                    /**
                     * @example event: message
                     *     data: {"result":{"tools":[{"name":"invite_user"},{"name":"list_invitations"},{"name":"revoke_invitation"},{"name":"list_members"}]},"jsonrpc":"2.0","id":1}
                     */
                    "text/event-stream": string;
                };
            };
            /** @description A notification or response was accepted; no body. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The body is not a valid JSON-RPC message (`VALIDATION_FAILED`, with the transport's JSON-RPC error in `details.jsonrpc`), or not JSON (`INVALID_JSON`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            406: components["responses"]["NotAcceptable"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    scimGetServiceProviderConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service provider's configuration. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimServiceProviderConfig"];
                };
            };
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimGetResourceTypes: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The resource types. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimDefinitionList"];
                };
            };
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimGetSchemas: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The schemas. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimDefinitionList"];
                };
            };
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimListUsers: {
        parameters: {
            query?: {
                /**
                 * @description A SCIM filter (RFC 7644 §3.4.2.2).
                 * @example userName eq "grace@example.com"
                 */
                filter?: components["parameters"]["ScimFilter"];
                /**
                 * @description The 1-based index of the first result (below 1 is read as 1).
                 * @example 1
                 */
                startIndex?: components["parameters"]["ScimStartIndex"];
                /**
                 * @description How many results at most (0 to count only; above 100 is read as 100).
                 * @example 100
                 */
                count?: components["parameters"]["ScimCount"];
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of Users. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimUserList"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimCreateUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimUserInput"];
                "application/json": components["schemas"]["ScimUserInput"];
            };
        };
        responses: {
            /** @description The member, provisioned or linked. */
            201: {
                headers: {
                    Location: components["headers"]["ScimLocation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimUser"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimGetUser: {
        parameters: {
            query?: {
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["ScimUserAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimReplaceUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimUserInput"];
                "application/json": components["schemas"]["ScimUserInput"];
            };
        };
        responses: {
            200: components["responses"]["ScimUserAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimDeleteUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimPatchUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimPatchRequest"];
                "application/json": components["schemas"]["ScimPatchRequest"];
            };
        };
        responses: {
            200: components["responses"]["ScimUserAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimListGroups: {
        parameters: {
            query?: {
                /**
                 * @description A SCIM filter (RFC 7644 §3.4.2.2).
                 * @example userName eq "grace@example.com"
                 */
                filter?: components["parameters"]["ScimFilter"];
                /**
                 * @description The 1-based index of the first result (below 1 is read as 1).
                 * @example 1
                 */
                startIndex?: components["parameters"]["ScimStartIndex"];
                /**
                 * @description How many results at most (0 to count only; above 100 is read as 100).
                 * @example 100
                 */
                count?: components["parameters"]["ScimCount"];
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of Groups. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimGroupList"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimCreateGroup: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimGroupInput"];
                "application/json": components["schemas"]["ScimGroupInput"];
            };
        };
        responses: {
            /** @description The group. */
            201: {
                headers: {
                    Location: components["headers"]["ScimLocation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimGroup"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimGetGroup: {
        parameters: {
            query?: {
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["ScimGroupAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimReplaceGroup: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimGroupInput"];
                "application/json": components["schemas"]["ScimGroupInput"];
            };
        };
        responses: {
            200: components["responses"]["ScimGroupAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimDeleteGroup: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    scimPatchGroup: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimPatchRequest"];
                "application/json": components["schemas"]["ScimPatchRequest"];
            };
        };
        responses: {
            200: components["responses"]["ScimGroupAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getScimServiceProviderConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service provider's configuration. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimServiceProviderConfig"];
                };
            };
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getScimResourceTypes: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The resource types. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimDefinitionList"];
                };
            };
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getScimSchemas: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The schemas. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimDefinitionList"];
                };
            };
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getScimUsers: {
        parameters: {
            query?: {
                /**
                 * @description A SCIM filter (RFC 7644 §3.4.2.2).
                 * @example userName eq "grace@example.com"
                 */
                filter?: components["parameters"]["ScimFilter"];
                /**
                 * @description The 1-based index of the first result (below 1 is read as 1).
                 * @example 1
                 */
                startIndex?: components["parameters"]["ScimStartIndex"];
                /**
                 * @description How many results at most (0 to count only; above 100 is read as 100).
                 * @example 100
                 */
                count?: components["parameters"]["ScimCount"];
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of Users. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimUserList"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    postScimUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimUserInput"];
                "application/json": components["schemas"]["ScimUserInput"];
            };
        };
        responses: {
            /** @description The member, provisioned or linked. */
            201: {
                headers: {
                    Location: components["headers"]["ScimLocation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimUser"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getScimUser: {
        parameters: {
            query?: {
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["ScimUserAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    putScimUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimUserInput"];
                "application/json": components["schemas"]["ScimUserInput"];
            };
        };
        responses: {
            200: components["responses"]["ScimUserAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    deleteScimUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    patchScimUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The member's id (an id of no member of this workspace is 404).
                 * @example 7c9e6679-7425-40de-944b-e07fc1f90ae7
                 */
                scimUserId: components["parameters"]["ScimUserId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimPatchRequest"];
                "application/json": components["schemas"]["ScimPatchRequest"];
            };
        };
        responses: {
            200: components["responses"]["ScimUserAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getScimGroups: {
        parameters: {
            query?: {
                /**
                 * @description A SCIM filter (RFC 7644 §3.4.2.2).
                 * @example userName eq "grace@example.com"
                 */
                filter?: components["parameters"]["ScimFilter"];
                /**
                 * @description The 1-based index of the first result (below 1 is read as 1).
                 * @example 1
                 */
                startIndex?: components["parameters"]["ScimStartIndex"];
                /**
                 * @description How many results at most (0 to count only; above 100 is read as 100).
                 * @example 100
                 */
                count?: components["parameters"]["ScimCount"];
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of Groups. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimGroupList"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    postScimGroups: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimGroupInput"];
                "application/json": components["schemas"]["ScimGroupInput"];
            };
        };
        responses: {
            /** @description The group. */
            201: {
                headers: {
                    Location: components["headers"]["ScimLocation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/scim+json": components["schemas"]["ScimGroup"];
                };
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getScimGroup: {
        parameters: {
            query?: {
                /**
                 * @description The attributes to return, comma-separated (`id` and `schemas` always are).
                 * @example userName,active
                 */
                attributes?: components["parameters"]["ScimAttributes"];
                /**
                 * @description Attributes to leave out, comma-separated.
                 * @example members
                 */
                excludedAttributes?: components["parameters"]["ScimExcludedAttributes"];
            };
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["ScimGroupAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    putScimGroup: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimGroupInput"];
                "application/json": components["schemas"]["ScimGroupInput"];
            };
        };
        responses: {
            200: components["responses"]["ScimGroupAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    deleteScimGroup: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    patchScimGroup: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The group's id (an id of no group of this workspace is 404).
                 * @example 5b0e8d7c-1f2a-4c3d-9e8f-0a1b2c3d4e5f
                 */
                scimGroupId: components["parameters"]["ScimGroupId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/scim+json": components["schemas"]["ScimPatchRequest"];
                "application/json": components["schemas"]["ScimPatchRequest"];
            };
        };
        responses: {
            200: components["responses"]["ScimGroupAnswer"];
            400: components["responses"]["ScimBadRequest"];
            401: components["responses"]["ScimUnauthorized"];
            403: components["responses"]["ScimForbidden"];
            404: components["responses"]["ScimNotFound"];
            409: components["responses"]["ScimConflict"];
            413: components["responses"]["ScimPayloadTooLarge"];
            415: components["responses"]["ScimUnsupportedMediaType"];
            429: components["responses"]["ScimTooManyRequests"];
            500: components["responses"]["ScimInternalError"];
            503: components["responses"]["ScimServiceUnavailable"];
        };
    };
    getIndexPage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Workspace</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getConsoleHome: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Workspace</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSignupPage: {
        parameters: {
            query?: {
                /** @example WolkFQVtGxtr2Gq2yvu73d8gXDl8-_SC-Lw8wPv7NUE */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page, in the invitation's language (else the browser's, the workspace's, English). */
            200: {
                headers: {
                    "Content-Language": components["headers"]["ContentLanguage"];
                    Vary: components["headers"]["VaryAcceptLanguage"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Join Acme Robotics</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getLoginPage: {
        parameters: {
            query?: {
                /** @example Xq2c9M0bVvJ7kR4tY1nP8sLw3eHdA6gZfU5iOyCjKmE */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page, in the browser's language (a sign-in link's page in its account's, when set). */
            200: {
                headers: {
                    "Content-Language": components["headers"]["ContentLanguage"];
                    Vary: components["headers"]["VaryAcceptLanguage"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Sign in</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSetupPage: {
        parameters: {
            query?: {
                /** @example q7Jx0cV3bN9mKp2Lw8sR4tY6uE1iO5aZdF3gH7jKl0M */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page, in the browser's language. */
            200: {
                headers: {
                    "Content-Language": components["headers"]["ContentLanguage"];
                    Vary: components["headers"]["VaryAcceptLanguage"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Set up your workspace</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getJoinPage: {
        parameters: {
            query?: {
                /** @example Pq7Rk2Ws9Xc4Vb1Nm6Lj3Hg8Fd5Sa0Zt */
                confirm?: string;
            };
            header?: never;
            path: {
                /**
                 * @description The code of an invite link (`{PUBLIC_URL}/join/{code}`).
                 * @example h3Vd9QpZ2mK7xR1tY5nB8sLw4eJcA6gU
                 */
                code: components["parameters"]["JoinCode"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page, in the invite link's language (else the browser's, the workspace's, English). */
            200: {
                headers: {
                    "Content-Language": components["headers"]["ContentLanguage"];
                    Vary: components["headers"]["VaryAcceptLanguage"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Join Acme Robotics</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            /** @description The code or `confirm` fails validation (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An HTML page saying the link is not valid (unknown, revoked or regenerated; `NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>This invite link is not valid</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An HTML page saying the link has expired (`TOKEN_EXPIRED`) or been used as often as it allows (`TOKEN_USED`). */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>This invite link has expired</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getDomainJoinPage: {
        parameters: {
            query?: {
                /** @example Jd8sK2mQ9vX4cR7tB1nL5wE3yH6gA0fZuP8iO2kMqS4 */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page, in the browser's language (else the workspace's default, English). */
            200: {
                headers: {
                    "Content-Language": components["headers"]["ContentLanguage"];
                    Vary: components["headers"]["VaryAcceptLanguage"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Join Acme Robotics</title></head>
                     *     <body><main>…</main></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getConsolePage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example members */
                screen: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Members</title></head>
                     *     <body><div id="app">…</div></body>
                     *     </html>
                     */
                    "text/html": string;
                };
            };
            /** @description The screen's name is not one a screen could have (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No screen of that name (`NOT_FOUND`). The console's page all the same, which shows its not-found screen with links to every screen; a client that accepts JSON and not HTML gets the ErrorResponse. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example <!doctype html>
                     *     <html lang="en">
                     *     <head><meta charset="utf-8"><title>Not found</title></head>
                     *     <body><div id="app">…</div></body>
                     *     </html>
                     */
                    "text/html": string;
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getBrandingLogo: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The logo's SHA-256 (64 lowercase hex digits) and its extension (`png`, `jpg` or `webp`).
                 * @example 9f2c6a1e0b7d4c3a8e5f1b2d6c9a0e7f4b3d2c1a0e9f8b7c6d5e4f3a2b1c0d9e.png
                 */
                file: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The image. */
            200: {
                headers: {
                    /** @description Always `public, max-age=31536000, immutable`. */
                    "Cache-Control"?: "public, max-age=31536000, immutable";
                    /** @description Always `nosniff`. */
                    "X-Content-Type-Options"?: "nosniff";
                    [name: string]: unknown;
                };
                content: {
                    /** @example (PNG bytes: 89 50 4E 47 0D 0A 1A 0A) */
                    "image/png": string;
                    /** @example (JPEG bytes: FF D8 FF … FF D9) */
                    "image/jpeg": string;
                    /** @example (WebP bytes: RIFF … WEBP VP8) */
                    "image/webp": string;
                };
            };
            /** @description Not a logo's name (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No workspace has this logo (now) (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getFavicon: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description SVG image. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /** @example <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">…</svg> */
                    "image/svg+xml": string;
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getPageScript: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example signup.js */
                script: "page-helpers.js" | "signup.js" | "login.js" | "setup.js" | "join.js" | "domain-join.js" | "api-docs.js";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description JavaScript. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example // @ts-check
                     *     // The signup page: preview the invitation named by ?token=…, then accept it.
                     *     /* global byId, inputById, postJson, show, errorText *\/
                     *     'use strict'
                     */
                    "application/javascript": string;
                };
            };
            /** @description Not one of the pages' scripts (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getHashedAsset: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The encodings the client takes (`br`, `gzip`); brotli is preferred.
                 * @example gzip, deflate, br
                 */
                "Accept-Encoding"?: string;
            };
            path: {
                /**
                 * @description A name the console page gives (`console.<16 hex digits>.js` or `.css`); any other name is 404.
                 * @example console.3f9a1c2b4d5e6f70.js
                 */
                asset: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file, in the encoding `Content-Encoding` names (`br` or `gzip`; absent for the file itself). */
            200: {
                headers: {
                    /** @description Always `public, max-age=31536000, immutable`. */
                    "Cache-Control"?: "public, max-age=31536000, immutable";
                    /** @description Always `Accept-Encoding`. */
                    Vary?: "Accept-Encoding";
                    [name: string]: unknown;
                };
                content: {
                    /** @example (()=>{var e=…})(); */
                    "application/javascript": string;
                    /** @example body{font:16px/1.5 system-ui,sans-serif}… */
                    "text/css": string;
                };
            };
            /** @description A name with characters no asset's name has, or an `Accept-Encoding` that is not printable ASCII (`VALIDATION_FAILED`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Not the name of a file of this build, or of the build before it (`NOT_FOUND`). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    webhookInvitationCreated: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.created";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationResent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.resent";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationAccepted: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.accepted";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationRevoked: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.revoked";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationExpired: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.expired";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationDeliveryFailed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.delivery_failed";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationViewed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.viewed";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationBounced: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.bounced";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInvitationReminderSent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invitation.reminder_sent";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookMemberJoined: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "member.joined";
                    data?: components["schemas"]["EventData"] & (unknown | unknown | unknown);
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInviteLinkCreated: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invite_link.created";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInviteLinkRegenerated: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invite_link.regenerated";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInviteLinkRevoked: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invite_link.revoked";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookDomainAdded: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "domain.added";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookDomainVerified: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "domain.verified";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookDomainFailed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "domain.failed";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookDomainRemoved: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "domain.removed";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookMemberRoleChanged: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "member.role_changed";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookMemberSuspended: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "member.suspended";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookMemberReactivated: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "member.reactivated";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookMemberRemoved: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "member.removed";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookApiKeyCreated: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "api_key.created";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookApiKeyRevoked: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "api_key.revoked";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookChatInstalled: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "chat.installed";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookChatUninstalled: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "chat.uninstalled";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInviteRequestCreated: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invite_request.created";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInviteRequestApproved: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invite_request.approved";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookInviteRequestDenied: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "invite_request.denied";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookWebhookTest: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "webhook.test";
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookSsoCertificateExpiring: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Event"] & {
                    /** @constant */
                    type?: "sso.certificate_expiring";
                    data?: components["schemas"]["EventData"];
                };
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the delivery; 410 disables the endpoint; anything else is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
