
export const batterySaverFlippedOn = story({
  intent: 'A "Battery saver" switch on a phone settings screen, flipped on',
  template: Switch,
  args: { label: 'Battery saver', checked: true },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('role', 'switch')
    assert({ given: 'battery saver on', should: 'expose aria-checked true', actual: control?.getAttribute('aria-checked'), expected: 'true' })
  },
})

export const guestWifiNotAdjustable = story({
  intent: 'A "Guest Wi-Fi" switch on a home router page, left off and not adjustable because only the account owner may change it',
  template: Switch,
  args: { label: 'Guest Wi-Fi', checked: false, disabled: true },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('role', 'switch')
    assert({ given: 'a non-owner', should: 'be disabled', actual: control?.disabled, expected: true })
    assert({ given: 'guest access off', should: 'expose aria-checked false', actual: control?.getAttribute('aria-checked'), expected: 'false' })
  },
})

export const outOfOfficeReplyActive = story({
  intent: 'An "Out-of-office reply" switch that is active, with the note "Senders get an automatic reply until you return." tied to it as its description',
  template: DescribedSwitch,
  args: {
    id: 'out-of-office',
    label: 'Out-of-office reply',
    hint: 'Senders get an automatic reply until you return.',
    checked: true,
  },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('id', 'out-of-office')
    assert({ given: 'an active auto-reply', should: 'be on', actual: control?.getAttribute('aria-checked'), expected: 'true' })
    assert({ given: 'a note', should: 'be described by it', actual: control?.getAttribute('aria-describedby'), expected: 'out-of-office-hint' })
  },
})

export const ecoScheduleRunningFrozen = story({
  intent: 'A smart thermostat "Eco schedule" switch that is running and frozen in place while the landlord\'s energy plan applies',
  template: Switch,
  args: { label: 'Eco schedule', checked: true, disabled: true },
  play: async ({ assert, findByAttribute }) => {
    const control = await findByAttribute('role', 'switch')
    assert({ given: 'a running schedule', should: 'be on', actual: control?.getAttribute('aria-checked'), expected: 'true' })
    assert({ given: 'a landlord plan', should: 'be disabled', actual: control?.disabled, expected: true })
  },
})

export const photoBackupSettings = story({
  intent: 'Photo backup settings as a column of switches: "Back up photos" activated, "Include videos" deactivated and "Only while charging" activated',
  template: SettingsList,
  args: {
    settings: [
      { id: 'backup-photos', label: 'Back up photos', checked: true },
      { id: 'include-videos', label: 'Include videos', checked: false },
      { id: 'while-charging', label: 'Only while charging', checked: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const photos = await findByAttribute('id', 'setting-backup-photos')
    assert({ given: 'photo backup activated', should: 'report on', actual: photos?.getAttribute('aria-checked'), expected: 'true' })
    const videos = await findByAttribute('id', 'setting-include-videos')
    assert({ given: 'videos left out', should: 'report off', actual: videos?.getAttribute('aria-checked'), expected: 'false' })
  },
})
