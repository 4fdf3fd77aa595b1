import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './text-input.css.ts'

export const meta = {
  title: 'Text input',
  description: 'Labelled text inputs with help text and error messages',
}

const TextInput: FT<{
  id: string
  label: string
  type?: string
  value?: string
  hint?: string
  error?: string
  required?: boolean
  disabled?: boolean
  readOnly?: boolean
  autoComplete?: string
}> = ({ id, label, type = 'text', value, hint, error, required = false, disabled = false, readOnly = false, ...rest }) => {
  const describedBy = [hint && `${id}-help`, error && `${id}-error`].filter((part) => part).join(' ')
  return (
    <div {...styles.field}>
      <label htmlFor={id} {...styles.label}>
        {label}
        {required && ' (required)'}
      </label>
      <input
        id={id}
        type={type}
        value={value}
        required={required}
        disabled={disabled}
        readOnly={readOnly}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
        {...joinStyles(styles.input, error && styles.invalid, disabled && styles.disabled)}
        {...rest}
      />
      {hint && (
        <p id={`${id}-help`} {...styles.hint}>
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} {...styles.error}>
          {error}
        </p>
      )}
    </div>
  )
}

const SearchField: FT<{ id: string; label: string; placeholder?: string }> = ({ id, label, placeholder }) => (
  <form role='search' {...styles.search}>
    <label htmlFor={id} {...styles.visuallyHidden}>
      {label}
    </label>
    <input id={id} type='search' name='q' placeholder={placeholder} {...styles.input} />
    <button type='submit'>Search</button>
  </form>
)

export const emailWithHelp = story({
  intent: 'Create an "Email address" input with help text saying it will never be shared',
  template: TextInput,
  args: {
    id: 'email',
    label: 'Email address',
    type: 'email',
    autoComplete: 'email',
    hint: 'We will never share your email with anyone.',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'email')
    assert({ given: 'a field with help text', should: 'reference the help text', actual: input?.getAttribute('aria-describedby'), expected: 'email-help' })
  },
})

export const passwordTooShort = story({
  intent: 'Create a password input in an error state with the message "Password must be at least 12 characters"',
  template: TextInput,
  args: {
    id: 'new-password',
    label: 'New password',
    type: 'password',
    autoComplete: 'new-password',
    value: 'hunter2',
    hint: 'Use 12 or more characters with a mix of letters and numbers.',
    error: 'Password must be at least 12 characters',
  },
})

export const disabledUsername = story({
  intent: 'Create a disabled "Username" text input pre-filled with "ada.lovelace"',
  template: TextInput,
  args: { id: 'username', label: 'Username', value: 'ada.lovelace', disabled: true },
})

export const requiredFullName = story({
  intent: 'Create a required "Full name" text input with autocomplete for the name',
  template: TextInput,
  args: { id: 'full-name', label: 'Full name', required: true, autoComplete: 'name' },
})

export const siteSearch = story({
  intent: 'Create a site search form with the visually hidden label "Search the documentation", a search input and a "Search" submit button',
  template: SearchField,
  args: { id: 'site-search', label: 'Search the documentation', placeholder: 'Search docs' },
})

export const readOnlyApiKey = story({
  intent: 'Show an "API key" value the user may select and copy but not edit',
  template: TextInput,
  args: { id: 'api-key', label: 'API key', value: 'sk_live_4f9a2c71', readOnly: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'api-key')
    assert({ given: 'a key to copy', should: 'be read-only', actual: input?.readOnly, expected: true })
  },
})

export const phoneNumberWrongLength = story({
  intent: 'A "Phone number" field that rejects "555-01" with the message "Enter a phone number with 10 digits"',
  template: TextInput,
  args: {
    id: 'phone',
    label: 'Phone number',
    type: 'tel',
    autoComplete: 'tel',
    value: '555-01',
    error: 'Enter a phone number with 10 digits',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'phone')
    assert({ given: 'a too short number', should: 'be invalid', actual: input?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'an error', should: 'reference it', actual: input?.getAttribute('aria-describedby'), expected: 'phone-error' })
  },
})

export const catalogueSearchBox = story({
  intent: 'A product catalogue lookup box with a hidden label "Search products" and the placeholder "Shoes, bags, jackets"',
  template: SearchField,
  args: { id: 'catalogue-search', label: 'Search products', placeholder: 'Shoes, bags, jackets' },
  play: async ({ assert, findByAttribute }) => {
    const form = await findByAttribute('role', 'search')
    const input = await findByAttribute('id', 'catalogue-search')
    assert({ given: 'a lookup box', should: 'be a search landmark', actual: Boolean(form), expected: true })
    assert({ given: 'a lookup box', should: 'show the placeholder', actual: input?.getAttribute('placeholder'), expected: 'Shoes, bags, jackets' })
  },
})

export const helpCentreArticleSearch = story({
  intent: 'A help centre search bar with the hidden label "Search help articles" and the placeholder "How do I reset my password?"',
  template: SearchField,
  args: { id: 'help-search', label: 'Search help articles', placeholder: 'How do I reset my password?' },
  play: async ({ assert, findByAttribute }) => {
    const form = await findByAttribute('role', 'search')
    const input = await findByAttribute('id', 'help-search')
    assert({ given: 'a help centre search', should: 'be a search landmark', actual: Boolean(form), expected: true })
    assert({ given: 'a help centre search', should: 'show the placeholder', actual: input?.getAttribute('placeholder'), expected: 'How do I reset my password?' })
  },
})

export const contactsFilterNoPlaceholder = story({
  intent: 'Add a "Filter contacts" search box above the address book list, without any placeholder text',
  template: SearchField,
  args: { id: 'contacts-filter', label: 'Filter contacts' },
  play: async ({ assert, findByAttribute, findByText }) => {
    const label = await findByText('Filter contacts')
    const input = await findByAttribute('id', 'contacts-filter')
    assert({ given: 'a contacts filter', should: 'label the search input', actual: label?.getAttribute('for'), expected: 'contacts-filter' })
    assert({ given: 'no placeholder', should: 'leave the placeholder out', actual: input?.getAttribute('placeholder'), expected: null })
  },
})

export const weatherCityLookup = story({
  intent: 'A weather app city lookup labelled "Find a city" (label hidden) with the example placeholder "e.g. Lisbon"',
  template: SearchField,
  args: { id: 'city-lookup', label: 'Find a city', placeholder: 'e.g. Lisbon' },
  play: async ({ assert, findByAttribute, findByText }) => {
    const input = await findByAttribute('id', 'city-lookup')
    const button = await findByText('Search')
    assert({ given: 'a city lookup', should: 'use a search input', actual: input?.getAttribute('type'), expected: 'search' })
    assert({ given: 'a city lookup', should: 'submit with the Search button', actual: button?.getAttribute('type'), expected: 'submit' })
  },
})

export const requiredIbanWithHint = story({
  intent: 'Create an "IBAN" field for a bank transfer that must be filled in, with the hint "Starts with your two-letter country code."',
  template: TextInput,
  args: {
    id: 'iban',
    label: 'IBAN',
    required: true,
    hint: 'Starts with your two-letter country code.',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'iban')
    assert({ given: 'a mandatory field', should: 'be required', actual: input?.required, expected: true })
    assert({ given: 'a hint', should: 'reference the hint', actual: input?.getAttribute('aria-describedby'), expected: 'iban-help' })
  },
})

export const bookedTripEmailLocked = story({
  intent: 'After a trip is booked, show the "Booking email" address field with "sam.rivera@example.com" filled in, readable but no longer editable',
  template: TextInput,
  args: { id: 'booking-email', label: 'Booking email', type: 'email', value: 'sam.rivera@example.com', readOnly: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'booking-email')
    assert({ given: 'a booked trip', should: 'use an email input', actual: input?.getAttribute('type'), expected: 'email' })
    assert({ given: 'a booked trip', should: 'be read-only', actual: input?.readOnly, expected: true })
  },
})

export const heartRateOutOfRange = story({
  intent: 'Build a required "Resting heart rate" number input holding "400", flagged invalid with the message "Enter a rate between 30 and 220 beats per minute"',
  template: TextInput,
  args: {
    id: 'heart-rate',
    label: 'Resting heart rate',
    type: 'number',
    value: '400',
    required: true,
    error: 'Enter a rate between 30 and 220 beats per minute',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'heart-rate')
    assert({ given: 'an impossible rate', should: 'be invalid', actual: input?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'an error message', should: 'reference it', actual: input?.getAttribute('aria-describedby'), expected: 'heart-rate-error' })
  },
})

export const studentIdGreyedOut = story({
  intent: 'A greyed-out "Student ID" input pre-filled with "S-20931" and the help text "Your ID is assigned by the registrar." underneath',
  template: TextInput,
  args: {
    id: 'student-id',
    label: 'Student ID',
    value: 'S-20931',
    disabled: true,
    hint: 'Your ID is assigned by the registrar.',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'student-id')
    assert({ given: 'a registrar-assigned ID', should: 'be disabled', actual: input?.disabled, expected: true })
    assert({ given: 'help text', should: 'reference it', actual: input?.getAttribute('aria-describedby'), expected: 'student-id-help' })
  },
})

export const shipmentTrackingSearch = story({
  intent: 'Give the warehouse dashboard a search form labelled "Find a shipment" for screen readers only, with the placeholder "Tracking number"',
  template: SearchField,
  args: { id: 'shipment-search', label: 'Find a shipment', placeholder: 'Tracking number' },
  play: async ({ assert, findByAttribute, findByText }) => {
    const form = await findByAttribute('role', 'search')
    const label = await findByText('Find a shipment')
    assert({ given: 'a shipment lookup', should: 'be a search landmark', actual: Boolean(form), expected: true })
    assert({ given: 'a hidden label', should: 'label the input', actual: label?.getAttribute('for'), expected: 'shipment-search' })
  },
})
