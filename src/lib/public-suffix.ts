import { getPublicSuffix } from 'tldts'

// The Public Suffix List (publicsuffix.org), ICANN and private sections both: names under which
// each name has another owner (`co.uk`, `github.io`, `blogspot.com`, and wildcard rules such as
// `*.ck`). Read from tldts, which is released with each update of the list; a service that
// upgrades it learns the new suffixes (and the migration of 036 failed those added before).

/** Whether `domain` (lower case, ASCII) is itself a public suffix: nobody's to prove. */
export function isPublicSuffix (domain: string): boolean {
  return getPublicSuffix(domain, { allowPrivateDomains: true, extractHostname: false }) === domain
}

/** Why a public suffix is refused, in the words the API and the migration use. */
export function publicSuffixReason (domain: string): string {
  return `${domain} is a public suffix (Public Suffix List): names under it belong to different owners`
}
