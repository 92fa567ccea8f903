import { Component, type ComponentChildren } from 'preact'

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
        <p>This screen stopped working: the console could not show what the service answered.</p>
        <p>Open another screen, or <a href={location.pathname}>load this one again</a>.</p>
      </div>
    )
  }
}
