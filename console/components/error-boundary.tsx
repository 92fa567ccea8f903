import { Component, type ComponentChildren } from 'preact'
import { t, tParts } from '../i18n.js'

/**
 * A screen that fails while drawing says so in its place; the navigation and the other screens
 * keep working (the app keys it by path, so opening another screen starts afresh).
 */
export class ErrorBoundary extends Component<{ children: ComponentChildren }, { failed: Error | null }> {
  override state = { failed: null }

  static getDerivedStateFromError (error: unknown) {
    return { failed: error instanceof Error ? error : new Error(String(error)) }
  }

  override render () {
    if (this.state.failed === null) return this.props.children
    return (
      <div class='problem' role='alert' id='screen-failed'>
        <p>{t('screenFailed')}</p>
        <p>{tParts('screenFailedNext', { reload: <a href={location.pathname}>{t('loadScreenAgain')}</a> })}</p>
      </div>
    )
  }
}
