import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './switch.css.ts'

export const meta = {
  title: 'Switch',
  description: 'On/off switches built on native buttons with role="switch"',
}

const Switch: FT<{
  checked?: boolean
  disabled?: boolean
  label: string
}> = ({ checked = false, disabled = false, label, ...rest }) => (
  <button
    type='button'
    role='switch'
    aria-checked={checked}
    disabled={disabled}
    p-trigger={{ click: 'toggle' }}
    {...joinStyles(styles.switch, disabled && styles.disabled)}
    {...rest}
  >
    <span {...joinStyles(styles.track, checked && styles.trackOn, disabled && styles.trackDisabled)} aria-hidden='true'>
      <span {...joinStyles(styles.thumb, checked && styles.thumbOn)}></span>
    </span>
    <span>{label}</span>
  </button>
)

const DescribedSwitch: FT<{
  id: string
  label: string
  hint: string
  checked?: boolean
}> = ({ id, label, hint, checked = false }) => (
  <div>
    <Switch id={id} label={label} checked={checked} aria-describedby={`${id}-hint`} />
    <p id={`${id}-hint`} {...styles.hint}>
      {hint}
    </p>
  </div>
)

const SettingsList: FT<{
  settings?: { id: string; label: string; checked: boolean }[]
}> = ({ settings = [] }) => (
  <ul {...styles.list}>
    {settings.map((setting) => (
      <li {...styles.item}>
        <Switch id={`setting-${setting.id}`} label={setting.label} checked={setting.checked} />
      </li>
    ))}
  </ul>
)

export const darkModeOn = story({
  intent: 'Create a "Dark mode" switch that is turned on',
  template: Switch,
  args: { label: 'Dark mode', checked: true },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('role', 'switch')
    assert({ given: 'a switch that is on', should: 'expose aria-checked true', actual: control?.getAttribute('aria-checked'), expected: 'true' })
  },
})

export const emailNotificationsOff = story({
  intent: 'Create an "Email notifications" switch in the off position',
  template: Switch,
  args: { label: 'Email notifications', checked: false },
})

export const disabledAirplaneMode = story({
  intent: 'Create a disabled "Airplane mode" switch that is off',
  template: Switch,
  args: { label: 'Airplane mode', disabled: true },
})

export const autoSaveWithHint = story({
  intent: 'Create an "Auto-save drafts" switch that is on, with the help text "Drafts are saved every 30 seconds while you type." linked through aria-describedby',
  template: DescribedSwitch,
  args: {
    id: 'auto-save',
    label: 'Auto-save drafts',
    hint: 'Drafts are saved every 30 seconds while you type.',
    checked: true,
  },
})

export const privacySettingsList = story({
  intent: 'Create a list of privacy settings switches for location sharing, read receipts and profile visibility',
  template: SettingsList,
  args: {
    settings: [
      { id: 'location', label: 'Share my location', checked: false },
      { id: 'receipts', label: 'Send read receipts', checked: true },
      { id: 'profile', label: 'Public profile', checked: false },
    ],
  },
})

export const twoFactorLockedOn = story({
  intent: 'A "Two-factor authentication" on/off control that is enabled and locked by the organisation so it cannot be changed',
  template: Switch,
  args: { label: 'Two-factor authentication', checked: true, disabled: true },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('role', 'switch')
    assert({ given: 'an enforced setting', should: 'be on', actual: control?.getAttribute('aria-checked'), expected: 'true' })
    assert({ given: 'an enforced setting', should: 'be disabled', actual: control?.disabled, expected: true })
  },
})

export const locationHistoryOffExplained = story({
  intent: 'A "Location history" toggle that is off, described by the sentence "Saves the places you visit." under it',
  template: DescribedSwitch,
  args: {
    id: 'location-history',
    label: 'Location history',
    hint: 'Saves the places you visit.',
  },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('id', 'location-history')
    assert({ given: 'an off setting', should: 'expose aria-checked false', actual: control?.getAttribute('aria-checked'), expected: 'false' })
    assert({ given: 'a hint', should: 'describe the control', actual: control?.getAttribute('aria-describedby'), expected: 'location-history-hint' })
  },
})

export const motionContrastBothOn = story({
  intent: 'Accessibility preferences as a list of two toggles, "Reduce motion" and "High contrast", both enabled',
  template: SettingsList,
  args: {
    settings: [
      { id: 'motion', label: 'Reduce motion', checked: true },
      { id: 'contrast', label: 'High contrast', checked: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const contrast = await findByAttribute('id', 'setting-contrast')
    assert({ given: 'both preferences on', should: 'report on', actual: contrast?.getAttribute('aria-checked'), expected: 'true' })
  },
})

export const spellCheckWithHint = story({
  intent: 'Create a "Spell check" switch, switched on, whose description "Underlines misspelled words as you type." is announced along with it',
  template: DescribedSwitch,
  args: {
    id: 'spell-check',
    label: 'Spell check',
    hint: 'Underlines misspelled words as you type.',
    checked: true,
  },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('id', 'spell-check')
    assert({ given: 'spell check enabled', should: 'expose aria-checked true', actual: control?.getAttribute('aria-checked'), expected: 'true' })
    assert({ given: 'a hint', should: 'point aria-describedby at the hint', actual: control?.getAttribute('aria-describedby'), expected: 'spell-check-hint' })
  },
})

export const mobileDataSyncOff = story({
  intent: 'A "Sync over mobile data" switch turned off, explained by "Uses your data plan when Wi-Fi is unavailable."',
  template: DescribedSwitch,
  args: {
    id: 'mobile-sync',
    label: 'Sync over mobile data',
    hint: 'Uses your data plan when Wi-Fi is unavailable.',
    checked: false,
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const control = await findByAttribute('id', 'mobile-sync')
    assert({ given: 'mobile sync turned off', should: 'expose aria-checked false', actual: control?.getAttribute('aria-checked'), expected: 'false' })
    const hint = await findByText('Uses your data plan when Wi-Fi is unavailable.')
    assert({ given: 'an explanation', should: 'give the hint the id the switch references', actual: hint?.getAttribute('id'), expected: 'mobile-sync-hint' })
  },
})

export const weeklyDigestWithHint = story({
  intent: 'An enabled "Weekly digest" email toggle with a short note saying "A summary of your activity arrives every Monday."',
  template: DescribedSwitch,
  args: {
    id: 'weekly-digest',
    label: 'Weekly digest',
    hint: 'A summary of your activity arrives every Monday.',
    checked: true,
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const control = await findByAttribute('id', 'weekly-digest')
    assert({ given: 'a subscribed digest', should: 'be on', actual: control?.getAttribute('aria-checked'), expected: 'true' })
    const hint = await findByText('A summary of your activity arrives every Monday.')
    assert({ given: 'a note under the toggle', should: 'show the note text', actual: hint?.textContent?.trim(), expected: 'A summary of your activity arrives every Monday.' })
  },
})

export const notificationChannelsList = story({
  intent: 'Notification channel preferences as switches: "Push notifications" on, "SMS alerts" off and "Product newsletter" off',
  template: SettingsList,
  args: {
    settings: [
      { id: 'push', label: 'Push notifications', checked: true },
      { id: 'sms', label: 'SMS alerts', checked: false },
      { id: 'newsletter', label: 'Product newsletter', checked: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const push = await findByAttribute('id', 'setting-push')
    assert({ given: 'push enabled', should: 'report on', actual: push?.getAttribute('aria-checked'), expected: 'true' })
    const sms = await findByAttribute('id', 'setting-sms')
    assert({ given: 'SMS disabled', should: 'report off', actual: sms?.getAttribute('aria-checked'), expected: 'false' })
  },
})

export const calendarDisplaySettings = story({
  intent: 'Calendar display settings as a list of switches where "Show week numbers" is on and "Show declined events" is off',
  template: SettingsList,
  args: {
    settings: [
      { id: 'week-numbers', label: 'Show week numbers', checked: true },
      { id: 'declined-events', label: 'Show declined events', checked: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const weekNumbers = await findByAttribute('id', 'setting-week-numbers')
    assert({ given: 'week numbers enabled', should: 'report on', actual: weekNumbers?.getAttribute('aria-checked'), expected: 'true' })
    const declined = await findByAttribute('id', 'setting-declined-events')
    assert({ given: 'declined events hidden', should: 'report off', actual: declined?.getAttribute('aria-checked'), expected: 'false' })
  },
})

export const contactlessPaymentsUnavailable = story({
  intent: 'A "Contactless payments" switch for a bank card, shown off and greyed out so it cannot be used until the card is activated',
  template: Switch,
  args: { label: 'Contactless payments', checked: false, disabled: true },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('role', 'switch')
    assert({ given: 'an inactive card', should: 'be off', actual: control?.getAttribute('aria-checked'), expected: 'false' })
    assert({ given: 'an inactive card', should: 'be disabled', actual: control?.disabled, expected: true })
  },
})

export const crossfadeSongsOn = story({
  intent: 'Add a "Crossfade between songs" toggle to the music player settings, already switched on',
  template: Switch,
  args: { label: 'Crossfade between songs', checked: true },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('role', 'switch')
    assert({ given: 'crossfade enabled', should: 'expose aria-checked true', actual: control?.getAttribute('aria-checked'), expected: 'true' })
    assert({ given: 'an editable setting', should: 'stay enabled', actual: control?.disabled, expected: false })
  },
})

export const frostAlertsExplained = story({
  intent: 'Build a "Frost alerts" switch for a gardening app, turned on, with the explanation "We text you when night temperatures drop below 2 degrees." read out with it',
  template: DescribedSwitch,
  args: {
    id: 'frost-alerts',
    label: 'Frost alerts',
    hint: 'We text you when night temperatures drop below 2 degrees.',
    checked: true,
  },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('id', 'frost-alerts')
    assert({ given: 'alerts enabled', should: 'be on', actual: control?.getAttribute('aria-checked'), expected: 'true' })
    assert({ given: 'an explanation', should: 'be described by it', actual: control?.getAttribute('aria-describedby'), expected: 'frost-alerts-hint' })
  },
})

export const medicationRemindersOff = story({
  intent: 'Medication reminders in a health app: a "Dose reminders" on/off control left switched off, with "Reminders follow the schedule from your pharmacist." printed below',
  template: DescribedSwitch,
  args: {
    id: 'dose-reminders',
    label: 'Dose reminders',
    hint: 'Reminders follow the schedule from your pharmacist.',
    checked: false,
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const control = await findByAttribute('id', 'dose-reminders')
    assert({ given: 'reminders not yet wanted', should: 'be off', actual: control?.getAttribute('aria-checked'), expected: 'false' })
    const hint = await findByText('Reminders follow the schedule from your pharmacist.')
    assert({ given: 'a printed note', should: 'carry the id the control references', actual: hint?.getAttribute('id'), expected: 'dose-reminders-hint' })
  },
})

export const courierDeliveryOptions = story({
  intent: 'Show courier delivery preferences as a stack of switches: "Leave with a neighbour" on, "Require a signature" off and "Evening delivery slots" on',
  template: SettingsList,
  args: {
    settings: [
      { id: 'neighbour', label: 'Leave with a neighbour', checked: true },
      { id: 'signature', label: 'Require a signature', checked: false },
      { id: 'evening', label: 'Evening delivery slots', checked: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const signature = await findByAttribute('id', 'setting-signature')
    assert({ given: 'no signature needed', should: 'report off', actual: signature?.getAttribute('aria-checked'), expected: 'false' })
    const evening = await findByAttribute('id', 'setting-evening')
    assert({ given: 'evening slots allowed', should: 'report on', actual: evening?.getAttribute('aria-checked'), expected: 'true' })
  },
})
