import { escapeHtml } from '../lib/html.js'
import { layout, type Page } from '../http/page-shell.js'
import { pageLook, scriptWord, sharedScriptWords, type PageReader } from '../i18n/page-words.js'
import { translate } from '../i18n/messages.js'
import {
  CURRENT_SESSION, factList, nameField, otherBrowserWarning, pageHeading
} from '../http/page-parts.js'

// The page a domain join link opens (/domain-join?token=…): the same for every token but for its
// language and look (src/i18n/page-locale.ts); its script previews the link and acts only when the
// person confirms (page-scripts/domain-join.ts).
export function domainJoinPage (reader: PageReader): Page {
  const { locale } = reader
  const title = translate(locale, 'pages.domainJoin.title')
  return layout(title, `
${pageHeading(escapeHtml(title), { text: escapeHtml(translate(locale, 'pages.checkingLink')), live: true })}
<form id="join" hidden>
  ${factList([
    [translate(locale, 'pages.fact.workspace'), 'join-workspace'],
    [translate(locale, 'pages.fact.email'), 'join-email'],
    [translate(locale, 'pages.fact.domain'), 'join-domain']
  ])}
  <p id="join-outcome"></p>
  ${otherBrowserWarning(translate(locale, 'pages.otherBrowser.continue'))}
  ${nameField(translate(locale, 'pages.field.name'))}
  ${CURRENT_SESSION}
  <button id="join-button" type="submit"></button>
</form>`, 'domain-join.js', pageLook(reader), {
    ...sharedScriptWords(locale),
    needsLink: translate(locale, 'pages.domainJoin.needsLink'),
    autoOutcome: translate(locale, 'pages.domainJoin.autoOutcome'),
    askOutcome: translate(locale, 'pages.domainJoin.askOutcome'),
    joinAs: scriptWord(locale, 'pages.domainJoin.joinAs', ['workspace', 'email']),
    askToJoin: scriptWord(locale, 'pages.domainJoin.askToJoin', ['workspace']),
    requested: scriptWord(locale, 'pages.domainJoin.requested', ['workspace'])
  })
}
