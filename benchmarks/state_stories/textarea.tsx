
export const giftMessageUnavailable = story({
  intent: 'An unavailable "Gift message" text area allowing up to 150 characters, with the placeholder "Gift messages are not offered for this item"',
  template: Textarea,
  args: {
    id: 'gift-message',
    label: 'Gift message',
    maxLength: 150,
    disabled: true,
    placeholder: 'Gift messages are not offered for this item',
  },
  play: async ({ assert, findByAttribute }) => {
    const field = await findByAttribute('id', 'gift-message')
    assert({ given: 'an unavailable gift message', should: 'be disabled', actual: field?.disabled, expected: true })
  },
})

export const damageDescriptionCannotSkip = story({
  intent: 'An insurance claim "Describe the damage" text area that the claimant can\'t skip, holding up to 600 characters, with the placeholder "What happened, and when?"',
  template: Textarea,
  args: {
    id: 'damage-description',
    label: 'Describe the damage',
    required: true,
    maxLength: 600,
    placeholder: 'What happened, and when?',
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const field = await findByAttribute('id', 'damage-description')
    const count = await findByText('0 of 600 characters used')
    assert({ given: 'a step the claimant cannot skip', should: 'be required', actual: field?.required, expected: true })
    assert({ given: 'an empty box', should: 'count zero characters', actual: Boolean(count), expected: true })
  },
})

export const doctorsNotesLockedText = story({
  intent: 'A three-row "Doctor\'s notes" box showing "Rest for a week and drink plenty of water." as locked text the patient cannot alter, with a 500 character limit',
  template: Textarea,
  args: {
    id: 'doctors-notes',
    label: "Doctor's notes",
    rows: 3,
    maxLength: 500,
    readOnly: true,
    value: 'Rest for a week and drink plenty of water.',
  },
  play: async ({ assert, findByAttribute }) => {
    const field = await findByAttribute('id', 'doctors-notes')
    assert({ given: 'locked notes', should: 'be read-only', actual: field?.readOnly, expected: true })
  },
})

export const recipeMethodIncorrect = story({
  intent: 'A "Recipe method" box that has to be completed, capped at 100 characters, containing just "Mix." and flagged as incorrect with "Describe at least two steps"',
  template: Textarea,
  args: {
    id: 'recipe-method',
    label: 'Recipe method',
    maxLength: 100,
    required: true,
    value: 'Mix.',
    error: 'Describe at least two steps',
  },
  play: async ({ assert, findByAttribute }) => {
    const field = await findByAttribute('id', 'recipe-method')
    assert({ given: 'a field that has to be completed', should: 'be required', actual: field?.required, expected: true })
    assert({ given: 'a too short method', should: 'be invalid', actual: field?.getAttribute('aria-invalid'), expected: 'true' })
  },
})

export const newsletterHeadlineTooLong = story({
  intent: 'A two-row "Newsletter headline" box with a 60 character limit holding "Our lab robot folds laundry, waters plants and also writes the weekly newsletter by itself", showing the problem "Shorten the headline to 60 characters"',
  template: Textarea,
  args: {
    id: 'newsletter-headline',
    label: 'Newsletter headline',
    rows: 2,
    maxLength: 60,
    value: 'Our lab robot folds laundry, waters plants and also writes the weekly newsletter by itself',
    error: 'Shorten the headline to 60 characters',
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const field = await findByAttribute('id', 'newsletter-headline')
    const over = await findByText('30 characters over the limit')
    assert({ given: 'a headline with a problem', should: 'be invalid', actual: field?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'too many characters', should: 'say how far over it is', actual: Boolean(over), expected: true })
  },
})
