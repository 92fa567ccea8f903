import { t, tParts } from '../i18n.js'

/** A screen whose chunk could not be fetched: Try again, or load the page afresh (a newer console). */
export function ScreenLoadFailed ({ title, retry }: { title: string, retry: () => void }) {
  return (
    <div class='problem' role='alert' id='screen-load-failed'>
      <p>{t('screenLoadFailed', { title })}</p>
      <p>
        {tParts('screenLoadRetry', {
          tryAgain: <button type='button' onClick={retry}>{t('tryAgain')}</button>,
          reload: <a href={location.pathname}>{t('loadPageAgain')}</a>
        })}
      </p>
    </div>
  )
}
