// Why a SAML message or metadata was refused, as a short code for the audit line. The code is all a
// caller shows or records: `cause` keeps a library's own text for debugging, never for a client.

export type SamlErrorCode =
  | 'too_large' | 'malformed' | 'doctype' | 'status_not_success'
  | 'unsigned' | 'bad_signature' | 'wrong_certificate' | 'sha1'
  | 'multiple_assertions' | 'misplaced_assertion' | 'encrypted_assertion'
  | 'issuer_mismatch' | 'audience_mismatch' | 'recipient_mismatch' | 'destination_mismatch'
  | 'in_response_to_mismatch' | 'unsolicited' | 'expired' | 'not_yet_valid' | 'replayed'
  | 'no_sso_redirect' | 'no_certificate'

export class SamlError extends Error {
  readonly code: SamlErrorCode

  constructor (code: SamlErrorCode, options?: { cause: unknown }) {
    super(`SAML refused: ${code}`, options)
    this.name = 'SamlError'
    this.code = code
  }
}
