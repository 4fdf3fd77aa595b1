import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './textarea.css.ts'

export const meta = {
  title: 'Textarea',
  description: 'Multi-line text fields with a live character count',
}

const Textarea: FT<{
  id: string
  label: string
  value?: string
  maxLength?: number
  rows?: number
  placeholder?: string
  required?: boolean
  disabled?: boolean
  error?: string
}> = ({ id, label, value = '', maxLength = 280, rows = 4, placeholder, required = false, disabled = false, error, ...rest }) => {
  const remaining = maxLength - value.length
  const describedBy = [`${id}-count`, error && `${id}-error`].filter((part) => part).join(' ')
  return (
    <div {...styles.field}>
      <label htmlFor={id} {...styles.label}>
        {label}
        {required && ' (required)'}
      </label>
      <textarea
        id={id}
        name={id}
        rows={rows}
        placeholder={placeholder}
        required={required}
        disabled={disabled}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy}
        p-trigger={{ input: 'count' }}
        {...joinStyles(styles.textarea, error && styles.invalid, disabled && styles.disabled)}
        {...rest}
      >
        {value}
      </textarea>
      <div {...styles.meta}>
        <p id={`${id}-count`} p-target='count' {...styles.hint}>
          {`${value.length} of ${maxLength} characters used`}
        </p>
        {error && (
          <p id={`${id}-error`} {...styles.error}>
            {error}
          </p>
        )}
      </div>
      {remaining < 0 && <p {...styles.error}>{`${-remaining} characters over the limit`}</p>}
    </div>
  )
}

export const feedbackWithCount = story({
  intent: 'Create a "Your feedback" textarea with a character count help text for a 500 character limit',
  template: Textarea,
  args: { id: 'feedback', label: 'Your feedback', maxLength: 500, value: 'The checkout was quick and easy.' },
  play: async ({ assert, findByText }) => {
    const count = await findByText('32 of 500 characters used')
    assert({ given: 'a prefilled textarea', should: 'show the character count', actual: Boolean(count), expected: true })
  },
})

export const bioTooLong = story({
  intent: 'Create a "Short bio" textarea in an error state because the text exceeds the 40 character limit',
  template: Textarea,
  args: {
    id: 'bio',
    label: 'Short bio',
    maxLength: 40,
    value: 'Product designer who loves typography, maps and long walks.',
    error: 'Your bio must be 40 characters or fewer',
  },
})

export const disabledArchivedNotes = story({
  intent: 'Create a disabled "Meeting notes" textarea for an archived meeting',
  template: Textarea,
  args: {
    id: 'meeting-notes',
    label: 'Meeting notes',
    value: 'Agreed to ship the beta on Friday.',
    disabled: true,
  },
})

export const requiredDeliveryInstructions = story({
  intent: 'Create a required "Delivery instructions" textarea with a placeholder and a 200 character limit',
  template: Textarea,
  args: {
    id: 'delivery-instructions',
    label: 'Delivery instructions',
    required: true,
    maxLength: 200,
    rows: 3,
    placeholder: 'For example: leave the parcel with the concierge',
  },
})

export const emptyCommentBox = story({
  intent: 'An empty "Add a comment" box with room for 1000 characters and the placeholder "Be kind and specific"',
  template: Textarea,
  args: { id: 'comment', label: 'Add a comment', maxLength: 1000, placeholder: 'Be kind and specific' },
  play: async ({ assert, findByText }) => {
    const count = await findByText('0 of 1000 characters used')
    assert({ given: 'an empty box', should: 'count zero characters', actual: Boolean(count), expected: true })
  },
})

export const cancellationReasonMissing = story({
  intent: 'A mandatory "Reason for cancelling" text area left blank, flagged with "Tell us why you are cancelling"',
  template: Textarea,
  args: {
    id: 'cancel-reason',
    label: 'Reason for cancelling',
    required: true,
    error: 'Tell us why you are cancelling',
  },
  play: async ({ assert, findByAttribute }) => {
    const field = await findByAttribute('id', 'cancel-reason')
    assert({ given: 'a blank mandatory field', should: 'be invalid', actual: field?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'a mandatory field', should: 'be required', actual: field?.required, expected: true })
  },
})

export const readOnlyTermsText = story({
  intent: 'Show the accepted sentence "Use, copy and modify freely." in a "Licence agreement" box with a 2000 character limit that can be read but not changed',
  template: Textarea,
  args: {
    id: 'licence',
    label: 'Licence agreement',
    rows: 6,
    maxLength: 2000,
    readOnly: true,
    value: 'Use, copy and modify freely.',
  },
  play: async ({ assert, findByAttribute }) => {
    const field = await findByAttribute('id', 'licence')
    assert({ given: 'agreed text', should: 'be read-only', actual: field?.readOnly, expected: true })
  },
})

export const plantingJournalPrefilled = story({
  intent: 'Build a six-row "Planting journal" textarea that allows at most 150 characters and already holds "Sowed basil and chives on the windowsill."',
  template: Textarea,
  args: {
    id: 'planting-journal',
    label: 'Planting journal',
    rows: 6,
    maxLength: 150,
    value: 'Sowed basil and chives on the windowsill.',
  },
  play: async ({ assert, findByText, findByAttribute }) => {
    const count = await findByText('41 of 150 characters used')
    const field = await findByAttribute('id', 'planting-journal')
    assert({ given: 'a prefilled journal', should: 'count the existing text', actual: Boolean(count), expected: true })
    assert({ given: 'a six-row journal', should: 'be six rows tall', actual: field?.getAttribute('rows'), expected: '6' })
  },
})

export const symptomsNeedOnsetError = story({
  intent: 'A "Describe your symptoms" field that must be filled in, capped at 300 characters, containing "Headache and a mild fever since Tuesday." and showing the error "Please say how severe the pain is"',
  template: Textarea,
  args: {
    id: 'symptoms',
    label: 'Describe your symptoms',
    required: true,
    maxLength: 300,
    value: 'Headache and a mild fever since Tuesday.',
    error: 'Please say how severe the pain is',
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const field = await findByAttribute('id', 'symptoms')
    const error = await findByText('Please say how severe the pain is')
    assert({ given: 'an incomplete answer', should: 'be invalid', actual: field?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'a field that must be filled in', should: 'be required', actual: field?.required, expected: true })
    assert({ given: 'an error', should: 'describe the field with it', actual: field?.getAttribute('aria-describedby')?.includes(error?.id ?? 'none'), expected: true })
  },
})

export const manifestNoteReadOnly = story({
  intent: 'Display a two-row "Shipping manifest note" that warehouse staff may view but never edit, holding "Pallet 14 holds fragile glassware." within a 120 character cap',
  template: Textarea,
  args: {
    id: 'manifest-note',
    label: 'Shipping manifest note',
    rows: 2,
    maxLength: 120,
    readOnly: true,
    value: 'Pallet 14 holds fragile glassware.',
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const field = await findByAttribute('id', 'manifest-note')
    const count = await findByText('34 of 120 characters used')
    assert({ given: 'a note staff may only view', should: 'be read-only', actual: field?.readOnly, expected: true })
    assert({ given: 'a note staff may only view', should: 'stay enabled', actual: field?.disabled, expected: false })
    assert({ given: 'a prefilled note', should: 'count its characters', actual: Boolean(count), expected: true })
  },
})

export const flightRequestsDisabled = story({
  intent: 'Create a greyed-out "Special requests for your flight" textarea with up to 250 characters and the placeholder "Requests open 48 hours before departure"',
  template: Textarea,
  args: {
    id: 'flight-requests',
    label: 'Special requests for your flight',
    maxLength: 250,
    disabled: true,
    placeholder: 'Requests open 48 hours before departure',
  },
  play: async ({ assert, findByAttribute }) => {
    const field = await findByAttribute('id', 'flight-requests')
    assert({ given: 'requests not yet open', should: 'be disabled', actual: field?.disabled, expected: true })
    assert({ given: 'a hint for later', should: 'show the placeholder', actual: field?.getAttribute('placeholder'), expected: 'Requests open 48 hours before departure' })
  },
})

export const disputeDetailsTooShort = story({
  intent: 'A five-line "Transaction dispute details" box limited to 400 characters where the entered text "Charged twice" is rejected with "Add at least 30 characters describing the charge"',
  template: Textarea,
  args: {
    id: 'dispute-details',
    label: 'Transaction dispute details',
    rows: 5,
    maxLength: 400,
    value: 'Charged twice',
    error: 'Add at least 30 characters describing the charge',
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const field = await findByAttribute('id', 'dispute-details')
    const count = await findByText('13 of 400 characters used')
    assert({ given: 'a rejected description', should: 'be invalid', actual: field?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'a short description', should: 'still count its characters', actual: Boolean(count), expected: true })
  },
})

export const labConclusionPlaceholder = story({
  intent: 'Give students an empty "Lab report conclusion" text box eight rows tall, with space for 1200 characters and the prompt "State whether your hypothesis was supported"',
  template: Textarea,
  args: {
    id: 'lab-conclusion',
    label: 'Lab report conclusion',
    rows: 8,
    maxLength: 1200,
    placeholder: 'State whether your hypothesis was supported',
  },
  play: async ({ assert, findByText, findByAttribute }) => {
    const count = await findByText('0 of 1200 characters used')
    const field = await findByAttribute('id', 'lab-conclusion')
    assert({ given: 'an empty conclusion', should: 'count zero characters', actual: Boolean(count), expected: true })
    assert({ given: 'an optional conclusion', should: 'not be required', actual: field?.required, expected: false })
  },
})
