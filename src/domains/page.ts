import { layout, type Page } from '../http/page-shell.js'
import { CURRENT_SESSION, factList, NAME_FIELD, otherBrowserWarning, pageHeading } from '../lib/page-parts.js'

// The page a domain join link opens (/domain-join?token=…): the same for every token; its script
// previews the link and acts only when the person confirms (page-scripts/domain-join.ts).
export function domainJoinPage (): Page {
  return layout('Join a workspace', `
${pageHeading('Join a workspace', { text: 'Checking your link…', live: true })}
<form id="join" hidden>
  ${factList([['Workspace', 'join-workspace'], ['E-mail', 'join-email'], ['Domain', 'join-domain']])}
  <p id="join-outcome"></p>
  ${otherBrowserWarning('Continue')}
  ${NAME_FIELD}
  ${CURRENT_SESSION}
  <button id="join-button" type="submit"></button>
</form>`, 'domain-join.js')
}
