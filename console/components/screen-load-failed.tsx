/** A screen whose chunk could not be fetched: Try again, or load the page afresh (a newer console). */
export function ScreenLoadFailed ({ title, retry }: { title: string, retry: () => void }) {
  return (
    <div class='problem' role='alert' id='screen-load-failed'>
      <p>{title} could not be loaded: the connection may have dropped, or the console was updated.</p>
      <p>
        <button type='button' onClick={retry}>Try again</button> or <a href={location.pathname}>load the page again</a>.
      </p>
    </div>
  )
}
