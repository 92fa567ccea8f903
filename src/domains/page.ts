import { layout, type Page } from '../http/page-shell.js'

// The page a domain join link opens (/domain-join?token=…): the same for every token; its script
// previews the link and acts only when the person confirms (page-scripts/domain-join.ts).
export function domainJoinPage (): Page {
  return layout('Join a workspace', `
<h1>Join a workspace</h1>
<p id="status" class="muted" role="status">Checking your link…</p>
<p id="error" class="error" role="alert" hidden></p>
<form id="join" hidden>
  <dl>
    <dt>Workspace</dt><dd id="join-workspace"></dd>
    <dt>E-mail</dt><dd id="join-email"></dd>
    <dt>Domain</dt><dd id="join-domain"></dd>
  </dl>
  <p id="join-outcome"></p>
  <p id="other-browser" class="error" hidden>This link was requested from another browser or device. Continue only if
  you asked for it yourself: a link someone sent you signs you in to their account.</p>
  <label for="name">Your name (optional)</label>
  <input id="name" name="name" maxlength="200" autocomplete="name">
  <p id="current-session" class="error" hidden></p>
  <button id="join-button" type="submit"></button>
</form>`, 'domain-join.js')
}
