
export const giftWrapPreselected = story({
  intent: 'An "Add gift wrapping" checkbox on a checkout page that comes pre-selected',
  template: Checkbox,
  args: { id: 'gift-wrap', label: 'Add gift wrapping', checked: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'gift-wrap')
    assert({ given: 'a pre-selected option', should: 'be checked', actual: input?.checked, expected: true })
  },
})

export const climbingWaiverCompulsory = story({
  intent: 'A compulsory "I accept the climbing wall safety waiver" checkbox that is still empty',
  template: Checkbox,
  args: { id: 'climbing-waiver', label: 'I accept the climbing wall safety waiver', required: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'climbing-waiver')
    assert({ given: 'a compulsory waiver', should: 'be required', actual: input?.required, expected: true })
    assert({ given: 'an empty waiver', should: 'be unchecked', actual: input?.checked, expected: false })
  },
})

export const ageConfirmationFlagged = story({
  intent: 'An "I am 18 or older" checkbox that can\'t be skipped and is flagged with the error "Confirm your age to buy this ticket"',
  template: Checkbox,
  args: {
    id: 'age-confirm',
    label: 'I am 18 or older',
    required: true,
    error: 'Confirm your age to buy this ticket',
  },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'age-confirm')
    assert({ given: 'a missing confirmation', should: 'be marked invalid', actual: input?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'a mandatory confirmation', should: 'be required', actual: input?.required, expected: true })
  },
})

export const nextDayDeliveryFaded = story({
  intent: 'A "Next-day delivery" checkbox shown faded and unmarked, because it cannot be chosen for this postcode',
  template: Checkbox,
  args: { id: 'next-day', label: 'Next-day delivery', disabled: true },
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'next-day')
    assert({ given: 'an unsupported postcode', should: 'be disabled', actual: input?.disabled, expected: true })
    assert({ given: 'an unmarked option', should: 'be unchecked', actual: input?.checked, expected: false })
  },
})

export const expenseReceiptsPartlyChosen = story({
  intent: 'A "Receipts to claim" list of taxi.pdf, hotel.pdf and dinner.pdf with only hotel.pdf marked, so "Select all files" is partly on',
  template: SelectAllGroup,
  args: {
    legend: 'Receipts to claim',
    items: [
      { id: 'receipt-taxi', label: 'taxi.pdf', checked: false },
      { id: 'receipt-hotel', label: 'hotel.pdf', checked: true },
      { id: 'receipt-dinner', label: 'dinner.pdf', checked: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const all = await findByAttribute('role', 'checkbox')
    const hotel = await findByAttribute('id', 'receipt-hotel')
    assert({ given: 'one of three receipts chosen', should: 'report mixed', actual: all?.getAttribute('aria-checked'), expected: 'mixed' })
    assert({ given: 'the hotel receipt chosen', should: 'be checked', actual: hotel?.checked, expected: true })
  },
})
