import type { JobDefinition } from '../ports/job-engine.js'
import {
  noticeExpiringCertificates, sendCertificateNotice, type CertificateNoticeDeps
} from './certificate-expiry.js'

/** SAML certificates near their expiry are looked for hourly; each admin's e-mail is a job. */
export function ssoJobs (deps: CertificateNoticeDeps): JobDefinition[] {
  return [
    { queue: 'sso-certificates', cron: '23 * * * *', run: async () => { await noticeExpiringCertificates(deps) } },
    { queue: 'sso-certificate-notice', run: async data => { await sendCertificateNotice(deps, data) } }
  ]
}
