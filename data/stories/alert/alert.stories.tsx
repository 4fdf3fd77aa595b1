import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './alert.css.ts'

export const meta = {
  title: 'Alert',
  description: 'Inline messages announced through role="status" or role="alert"',
}

type Variant = 'info' | 'success' | 'warning' | 'error'

const DismissButton: FT<{ label: string }> = ({ label }) => (
  <button type='button' aria-label={label} p-trigger={{ click: 'dismiss' }} {...styles.dismiss}>
    <span aria-hidden='true'>×</span>
  </button>
)

const Alert: FT<{
  variant?: Variant
  title?: string
  dismissible?: boolean
  dismissLabel?: string
}> = ({ variant = 'info', title, dismissible = false, dismissLabel = 'Dismiss message', children, ...rest }) => (
  <div
    role={variant === 'error' || variant === 'warning' ? 'alert' : 'status'}
    {...joinStyles(
      styles.alert,
      variant === 'info' && styles.info,
      variant === 'success' && styles.success,
      variant === 'warning' && styles.warning,
      variant === 'error' && styles.error,
    )}
    {...rest}
  >
    <div {...styles.content}>
      {title && <p {...styles.title}>{title}</p>}
      <p {...styles.message}>{children}</p>
    </div>
    {dismissible && <DismissButton label={dismissLabel} />}
  </div>
)

export const maintenanceInfo = story({
  intent: 'Create an informational status message announcing scheduled maintenance on Sunday at 02:00 UTC',
  template: Alert,
  args: {
    variant: 'info',
    title: 'Scheduled maintenance',
    children: 'The dashboard will be unavailable on Sunday from 02:00 to 03:00 UTC.',
  },
})

export const profileSavedSuccess = story({
  intent: 'Create a success status message confirming "Your profile has been saved"',
  template: Alert,
  args: { variant: 'success', children: 'Your profile has been saved.' },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'status')
    assert({ given: 'a success message', should: 'use the status role', actual: message?.textContent, expected: 'Your profile has been saved.' })
  },
})

export const storageWarning = story({
  description: 'Create a warning alert telling the user their storage is 90% full',
  template: Alert,
  args: {
    variant: 'warning',
    title: 'Storage almost full',
    children: 'You have used 90% of your 10 GB plan. Delete files or upgrade to keep syncing.',
  },
})

export const paymentDeclinedError = story({
  intent: 'Create an error alert with role="alert" saying the payment was declined',
  template: Alert,
  args: {
    variant: 'error',
    title: 'Payment declined',
    children: 'Your card was declined. Check the card details or use a different payment method.',
  },
})

export const dismissibleCookieNotice = story({
  intent: 'Create a dismissible info message about updated cookie settings with a close button labelled "Dismiss cookie notice"',
  template: Alert,
  args: {
    variant: 'info',
    title: 'Cookie settings updated',
    dismissible: true,
    dismissLabel: 'Dismiss cookie notice',
    children: 'We only use cookies that are needed for the site to work.',
  },
})

export const sessionExpiryWarning = story({
  intent: 'Warn that the session expires in five minutes, with a close control named "Close session warning"',
  template: Alert,
  args: {
    variant: 'warning',
    title: 'Session expiring',
    dismissible: true,
    dismissLabel: 'Close session warning',
    children: 'You will be signed out in five minutes unless you continue working.',
  },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'alert')
    const close = await findByAttribute('aria-label', 'Close session warning')
    assert({ given: 'a warning', should: 'use the alert role', actual: Boolean(message), expected: true })
    assert({ given: 'a dismissible warning', should: 'have a named close button', actual: close?.tagName, expected: 'BUTTON' })
  },
})

export const uploadFinishedPolite = story({
  intent: 'Tell the user politely that 3 files finished uploading, with no heading and a close button named "Dismiss upload notice"',
  template: Alert,
  args: { variant: 'success', dismissible: true, dismissLabel: 'Dismiss upload notice', children: '3 files finished uploading.' },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'status')
    assert({ given: 'a success notice', should: 'announce the count politely', actual: message?.textContent?.includes('3 files finished uploading.'), expected: true })
  },
})

export const calendarSyncErrorDismissible = story({
  intent: 'Show an urgent banner that the calendar could not sync, which the user can close with a "Hide sync error" button',
  template: Alert,
  args: {
    variant: 'error',
    title: 'Calendar sync failed',
    dismissible: true,
    dismissLabel: 'Hide sync error',
    children: 'We could not reach your calendar provider. Events may be out of date.',
  },
  play: async ({ assert, findByAttribute }) => {
    const close = await findByAttribute('aria-label', 'Hide sync error')
    const message = await findByAttribute('role', 'alert')
    assert({ given: 'an error banner', should: 'use the alert role', actual: Boolean(message), expected: true })
    assert({ given: 'a dismissible error', should: 'have a close button', actual: Boolean(close), expected: true })
  },
})

export const gardenTipCloseButton = story({
  intent: 'Just the small "×" close button of a gardening tip card, announced to screen readers as "Close pruning tip"',
  template: DismissButton,
  args: { label: 'Close pruning tip' },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('aria-label', 'Close pruning tip')
    assert({ given: 'a close button', should: 'be a real button', actual: button?.tagName, expected: 'BUTTON' })
  },
})

export const transferCompleteDismissible = story({
  intent: 'Confirm a bank transfer with a success message headed "Transfer complete" that the customer can clear via a "Dismiss transfer confirmation" button',
  template: Alert,
  args: {
    variant: 'success',
    title: 'Transfer complete',
    dismissible: true,
    dismissLabel: 'Dismiss transfer confirmation',
    children: '250.00 GBP was sent to Jamie Clarke and should arrive within two hours.',
  },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'status')
    const close = await findByAttribute('aria-label', 'Dismiss transfer confirmation')
    assert({ given: 'a success message', should: 'use the status role', actual: Boolean(message), expected: true })
    assert({ given: 'a dismissible success message', should: 'have a labelled close button', actual: close?.tagName, expected: 'BUTTON' })
  },
})

export const passportExpiryNoTitle = story({
  intent: 'A permanent travel warning, without a heading or close button, saying "Your passport expires in 3 months, before your return flight."',
  template: Alert,
  args: { variant: 'warning', children: 'Your passport expires in 3 months, before your return flight.' },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'alert')
    assert({ given: 'a warning', should: 'be announced assertively', actual: message?.textContent, expected: 'Your passport expires in 3 months, before your return flight.' })
  },
})

export const appointmentBookingFailed = story({
  intent: 'Display an error with the heading "Booking failed" explaining the 10:30 dentist slot was just taken, with no way to close it',
  template: Alert,
  args: {
    variant: 'error',
    title: 'Booking failed',
    children: 'The 10:30 slot with the dentist was just taken. Please choose another time.',
  },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'alert')
    assert({ given: 'a non-dismissible error', should: 'have no close button', actual: message?.querySelector('button'), expected: null })
  },
})

export const gradesPublishedDefaultClose = story({
  intent: 'Let students know with a neutral notice that "Term 2 grades are now published", closable through a button keeping the default "Dismiss message" name',
  template: Alert,
  args: { dismissible: true, children: 'Term 2 grades are now published.' },
  play: async ({ assert, findByAttribute }) => {
    const close = await findByAttribute('aria-label', 'Dismiss message')
    const message = await findByAttribute('role', 'status')
    assert({ given: 'no custom label', should: 'use the default close name', actual: Boolean(close), expected: true })
    assert({ given: 'an info notice', should: 'use the status role', actual: Boolean(message), expected: true })
  },
})
