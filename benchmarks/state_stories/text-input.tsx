
export const libraryCardNumberInactive = story({
  intent: 'An inactive "Library card number" field showing "LC-448102" that cannot be clicked into, with the note "Card numbers are issued at the front desk." below it',
  template: TextInput,
  args: {
    id: 'library-card',
    label: 'Library card number',
    value: 'LC-448102',
    disabled: true,
    hint: 'Card numbers are issued at the front desk.',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'library-card')
    assert({ given: 'an inactive field', should: 'be disabled', actual: input?.disabled, expected: true })
  },
})

export const postcodeMandatoryWrong = story({
  intent: 'A mandatory "Postcode" field holding "ZZ9" that is marked as wrong with the message "Enter a full postcode, like SW1A 1AA"',
  template: TextInput,
  args: {
    id: 'postcode',
    label: 'Postcode',
    autoComplete: 'postal-code',
    value: 'ZZ9',
    required: true,
    error: 'Enter a full postcode, like SW1A 1AA',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'postcode')
    assert({ given: 'a mandatory field', should: 'be required', actual: input?.required, expected: true })
    assert({ given: 'a wrong postcode', should: 'be invalid', actual: input?.getAttribute('aria-invalid'), expected: 'true' })
  },
})

export const referralCodeViewOnly = story({
  intent: 'A "Referral code" box showing "GROW-7Q2K" that people can look at and highlight but have no way to change',
  template: TextInput,
  args: { id: 'referral-code', label: 'Referral code', value: 'GROW-7Q2K', readOnly: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'referral-code')
    assert({ given: 'a code to share', should: 'be read-only', actual: input?.readOnly, expected: true })
  },
})

export const vehicleRegistrationCannotBeEmpty = story({
  intent: 'On a parking permit form, a "Vehicle registration" box that cannot be left empty, with the hint "As printed on your number plate."',
  template: TextInput,
  args: {
    id: 'vehicle-registration',
    label: 'Vehicle registration',
    required: true,
    hint: 'As printed on your number plate.',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'vehicle-registration')
    assert({ given: 'a field that cannot be empty', should: 'be required', actual: input?.required, expected: true })
  },
})

export const workEmailCompulsoryNotAccepted = story({
  intent: 'A compulsory "Work email" email field containing "jo@gmail.com" that was not accepted, explaining "Use your company email address"',
  template: TextInput,
  args: {
    id: 'work-email',
    label: 'Work email',
    type: 'email',
    autoComplete: 'email',
    value: 'jo@gmail.com',
    required: true,
    error: 'Use your company email address',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'work-email')
    assert({ given: 'a rejected address', should: 'be invalid', actual: input?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'an error', should: 'reference it', actual: input?.getAttribute('aria-describedby'), expected: 'work-email-error' })
  },
})
