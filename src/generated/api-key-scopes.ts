// This file is generated from openapi.yaml by `npm run generate` (the ApiKeyScope schema).
// Do not edit it by hand: change the contract and regenerate. CI fails when it is stale.
/* eslint-disable */
import type { components } from './openapi.js'

/** The contract's scope catalogue, in its order, with what each scope allows. */
export const apiKeyScopes: ReadonlyArray<{ scope: components['schemas']['ApiKeyScope'], description: string }> = [
  {
    "scope": "workspace:read",
    "description": "See the workspace and its settings."
  },
  {
    "scope": "workspace:write",
    "description": "Change the workspace's settings; disconnect Slack."
  },
  {
    "scope": "members:read",
    "description": "See the members and their roles."
  },
  {
    "scope": "members:write",
    "description": "Change members' roles and remove members."
  },
  {
    "scope": "members:admin",
    "description": "Make or unmake admins (with the scope of the operation that does it)."
  },
  {
    "scope": "invitations:read",
    "description": "See invitations, batches and the funnel."
  },
  {
    "scope": "invitations:write",
    "description": "Invite people; re-send and revoke invitations."
  },
  {
    "scope": "requests:read",
    "description": "See invite requests."
  },
  {
    "scope": "requests:write",
    "description": "Approve and deny invite requests."
  },
  {
    "scope": "links:read",
    "description": "See invite links (their addresses admit people)."
  },
  {
    "scope": "links:write",
    "description": "Create, revoke and regenerate invite links."
  },
  {
    "scope": "domains:read",
    "description": "See verified domains."
  },
  {
    "scope": "domains:write",
    "description": "Add, verify, change and remove domains."
  },
  {
    "scope": "webhooks:read",
    "description": "See webhook endpoints and their deliveries (never a signing secret)."
  },
  {
    "scope": "webhooks:write",
    "description": "Add, change, test and remove webhook endpoints; rotate their secrets; retry deliveries."
  },
  {
    "scope": "sso:read",
    "description": "See single sign-on connections (never a client secret)."
  },
  {
    "scope": "sso:write",
    "description": "Add, change and remove single sign-on connections."
  },
  {
    "scope": "events:read",
    "description": "Read the event feed."
  },
  {
    "scope": "audit:read",
    "description": "Read the audit trail."
  },
  {
    "scope": "audit-streams:read",
    "description": "See audit streams, their last delivery and lag (never a token)."
  },
  {
    "scope": "audit-streams:write",
    "description": "Add, change, test, pause, resume and remove audit streams."
  },
  {
    "scope": "scim",
    "description": "The company directory's SCIM 2.0 access under `/api/scim/v2` (provision, suspend and remove members; groups). A key holding it alone belongs to the workspace, not to the admin who made it."
  }
]
