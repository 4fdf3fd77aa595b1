import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './checkbox.css.ts'

export const meta = {
  title: 'Checkbox',
  description: 'Labelled native checkboxes with checked, disabled, error and mixed states',
}

const Checkbox: FT<{
  id: string
  label: string
  checked?: boolean
  disabled?: boolean
  required?: boolean
  error?: string
}> = ({ id, label, checked = false, disabled = false, required = false, error, ...rest }) => (
  <div {...styles.field}>
    <label htmlFor={id} {...joinStyles(styles.label, disabled && styles.disabled)}>
      <input
        type='checkbox'
        id={id}
        checked={checked}
        disabled={disabled}
        required={required}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        p-trigger={{ change: 'toggle' }}
        {...joinStyles(styles.input, error && styles.invalid)}
        {...rest}
      />
      {label}
    </label>
    {error && (
      <p id={`${id}-error`} {...styles.error}>
        {error}
      </p>
    )}
  </div>
)

const SelectAllGroup: FT<{
  legend: string
  items?: { id: string; label: string; checked: boolean }[]
}> = ({ legend, items = [] }) => {
  const checkedCount = items.filter((item) => item.checked).length
  const state = checkedCount === 0 ? 'false' : checkedCount === items.length ? 'true' : 'mixed'
  return (
    <fieldset {...styles.group}>
      <legend>{legend}</legend>
      <button type='button' role='checkbox' aria-checked={state} p-trigger={{ click: 'toggleAll' }} {...styles.mixedBox}>
        <span {...styles.mixedMark} aria-hidden='true'>
          {state === 'mixed' ? '-' : state === 'true' ? 'x' : ''}
        </span>
        Select all files
      </button>
      <ul {...styles.list}>
        {items.map((item) => (
          <li>
            <Checkbox id={item.id} label={item.label} checked={item.checked} />
          </li>
        ))}
      </ul>
    </fieldset>
  )
}

export const termsUnchecked = story({
  intent: 'Create an unchecked "I agree to the terms of service" checkbox',
  template: Checkbox,
  args: { id: 'terms', label: 'I agree to the terms of service' },
})

export const newsletterChecked = story({
  intent: 'Create a checked "Subscribe to the monthly newsletter" checkbox',
  template: Checkbox,
  args: { id: 'newsletter', label: 'Subscribe to the monthly newsletter', checked: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'newsletter')
    assert({ given: 'a checked checkbox', should: 'be checked', actual: input?.checked, expected: true })
  },
})

export const disabledRememberDevice = story({
  intent: 'Create a disabled "Remember this device" checkbox',
  template: Checkbox,
  args: { id: 'remember-device', label: 'Remember this device', disabled: true },
})

export const requiredConsentError = story({
  intent: 'Create a required privacy consent checkbox showing the error "You must accept the privacy policy to continue"',
  template: Checkbox,
  args: {
    id: 'privacy-consent',
    label: 'I have read the privacy policy',
    required: true,
    error: 'You must accept the privacy policy to continue',
  },
})

export const indeterminateSelectAll = story({
  intent: 'Create an indeterminate "Select all files" checkbox above a list of three files where only one is checked',
  template: SelectAllGroup,
  args: {
    legend: 'Files to download',
    items: [
      { id: 'file-report', label: 'report.pdf', checked: true },
      { id: 'file-budget', label: 'budget.xlsx', checked: false },
      { id: 'file-slides', label: 'slides.key', checked: false },
    ],
  },
})

export const allPhotosSelected = story({
  intent: 'A "Photos to share" bulk selection of beach.jpg, harbour.jpg and sunset.jpg where every photo is ticked, so "Select all files" reads fully checked',
  template: SelectAllGroup,
  args: {
    legend: 'Photos to share',
    items: [
      { id: 'photo-beach', label: 'beach.jpg', checked: true },
      { id: 'photo-harbour', label: 'harbour.jpg', checked: true },
      { id: 'photo-sunset', label: 'sunset.jpg', checked: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const all = await findByAttribute('role', 'checkbox')
    assert({ given: 'every item checked', should: 'report true', actual: all?.getAttribute('aria-checked'), expected: 'true' })
  },
})

export const nothingSelectedAttachments = story({
  intent: 'An "Attachments" bulk selection of invoice.pdf and contract.docx where none is ticked yet, so the master control reads unchecked',
  template: SelectAllGroup,
  args: {
    legend: 'Attachments',
    items: [
      { id: 'att-invoice', label: 'invoice.pdf', checked: false },
      { id: 'att-contract', label: 'contract.docx', checked: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const all = await findByAttribute('role', 'checkbox')
    assert({ given: 'no item checked', should: 'report false', actual: all?.getAttribute('aria-checked'), expected: 'false' })
  },
})

export const essentialCookiesLocked = story({
  intent: 'An "Essential cookies" option that is always on: ticked and impossible to untick',
  template: Checkbox,
  args: { id: 'essential-cookies', label: 'Essential cookies', checked: true, disabled: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'essential-cookies')
    assert({ given: 'a locked option', should: 'be checked', actual: input?.checked, expected: true })
    assert({ given: 'a locked option', should: 'be disabled', actual: input?.disabled, expected: true })
  },
})

export const partialInvoiceExport = story({
  intent: 'An "Invoices to export" picker listing january.csv, february.csv, march.csv and april.csv with the first two ticked, so "Select all files" shows a dash',
  template: SelectAllGroup,
  args: {
    legend: 'Invoices to export',
    items: [
      { id: 'inv-january', label: 'january.csv', checked: true },
      { id: 'inv-february', label: 'february.csv', checked: true },
      { id: 'inv-march', label: 'march.csv', checked: false },
      { id: 'inv-april', label: 'april.csv', checked: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const all = await findByAttribute('role', 'checkbox')
    assert({ given: 'two of four invoices checked', should: 'report mixed', actual: all?.getAttribute('aria-checked'), expected: 'mixed' })
    assert({ given: 'a partial selection', should: 'show a dash mark', actual: all?.querySelector('span')?.textContent, expected: '-' })
  },
})

export const noAllergiesRequired = story({
  intent: 'Create an empty "I confirm the patient has no known allergies" checkbox that must be ticked before the form can be sent',
  template: Checkbox,
  args: { id: 'no-allergies', label: 'I confirm the patient has no known allergies', required: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'no-allergies')
    assert({ given: 'a mandatory confirmation', should: 'be required', actual: input?.required, expected: true })
    assert({ given: 'a fresh form', should: 'start unchecked', actual: input?.checked, expected: false })
  },
})

export const passportValidityConfirmed = story({
  intent: 'A mandatory "My passport is valid for six months after travel" tickbox that the traveller has already ticked',
  template: Checkbox,
  args: { id: 'passport-valid', label: 'My passport is valid for six months after travel', checked: true, required: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'passport-valid')
    assert({ given: 'a confirmed declaration', should: 'be checked', actual: input?.checked, expected: true })
    assert({ given: 'a mandatory declaration', should: 'be required', actual: input?.required, expected: true })
  },
})

export const permissionSlipMissing = story({
  intent: 'Show an unticked optional "A parent has signed the field trip permission slip" checkbox flagged with the message "Please upload the signed slip before the trip"',
  template: Checkbox,
  args: {
    id: 'permission-slip',
    label: 'A parent has signed the field trip permission slip',
    error: 'Please upload the signed slip before the trip',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'permission-slip')
    assert({ given: 'a flagged checkbox', should: 'be marked invalid', actual: input?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'a flagged checkbox', should: 'point at its message', actual: input?.getAttribute('aria-describedby'), expected: 'permission-slip-error' })
  },
})

export const rehearsalTracksPartial = story({
  intent: 'Build a "Tracks to download" list of intro.mp3, verse.mp3, chorus.mp3, bridge.mp3 and outro.mp3 where only the first three are ticked, leaving "Select all files" half on',
  template: SelectAllGroup,
  args: {
    legend: 'Tracks to download',
    items: [
      { id: 'track-intro', label: 'intro.mp3', checked: true },
      { id: 'track-verse', label: 'verse.mp3', checked: true },
      { id: 'track-chorus', label: 'chorus.mp3', checked: true },
      { id: 'track-bridge', label: 'bridge.mp3', checked: false },
      { id: 'track-outro', label: 'outro.mp3', checked: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const all = await findByAttribute('role', 'checkbox')
    assert({ given: 'three of five tracks chosen', should: 'report mixed', actual: all?.getAttribute('aria-checked'), expected: 'mixed' })
  },
})

export const singleShippingLabelChosen = story({
  intent: 'Put one file, label-4821.pdf, under a "Shipping labels to print" heading with it already ticked, which makes "Select all files" appear on as well',
  template: SelectAllGroup,
  args: {
    legend: 'Shipping labels to print',
    items: [{ id: 'label-4821', label: 'label-4821.pdf', checked: true }],
  },
  play: async ({ assert, findByAttribute }) => {
    const all = await findByAttribute('role', 'checkbox')
    const item = await findByAttribute('id', 'label-4821')
    assert({ given: 'the only label chosen', should: 'report true', actual: all?.getAttribute('aria-checked'), expected: 'true' })
    assert({ given: 'the only label chosen', should: 'tick the file', actual: item?.checked, expected: true })
  },
})
