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
  intent: 'Create an "Auto-save drafts" switch with help text linked through aria-describedby',
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
