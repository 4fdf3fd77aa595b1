
export const binCollectionDayCompulsory = story({
  intent: 'A "Bin collection day" question that cannot be left unanswered, offering Monday, Wednesday and Friday, with Wednesday already filled in',
  template: RadioGroup,
  args: {
    name: 'bin-day',
    legend: 'Bin collection day',
    required: true,
    value: 'wednesday',
    options: [
      { value: 'monday', label: 'Monday' },
      { value: 'wednesday', label: 'Wednesday' },
      { value: 'friday', label: 'Friday' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const wednesday = await findByAttribute('id', 'bin-day-wednesday')
    assert({ given: 'a saved collection day', should: 'check Wednesday', actual: wednesday?.checked, expected: true })
  },
})

export const gymClassBoxingOff = story({
  intent: 'A "Gym class" choice of Yoga, Spin and Boxing where Boxing is switched off and can\'t be chosen, with the note "Instructor away"',
  template: RadioGroup,
  args: {
    name: 'gym-class',
    legend: 'Gym class',
    options: [
      { value: 'yoga', label: 'Yoga' },
      { value: 'spin', label: 'Spin' },
      { value: 'boxing', label: 'Boxing', hint: 'Instructor away', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const boxing = await findByAttribute('id', 'gym-class-boxing')
    assert({ given: 'a class without an instructor', should: 'be disabled', actual: boxing?.disabled, expected: true })
  },
})

export const returnReasonRejected = story({
  intent: 'A "Return reason" question with Damaged, Wrong size and Changed my mind, where "Changed my mind" is the answer given but it is rejected with the message "Changed my mind returns close after 14 days"',
  template: RadioGroup,
  args: {
    name: 'return-reason',
    legend: 'Return reason',
    value: 'changed-mind',
    error: 'Changed my mind returns close after 14 days',
    options: [
      { value: 'damaged', label: 'Damaged' },
      { value: 'wrong-size', label: 'Wrong size' },
      { value: 'changed-mind', label: 'Changed my mind' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const changed = await findByAttribute('id', 'return-reason-changed-mind')
    assert({ given: 'a rejected answer', should: 'be marked invalid', actual: changed?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'the given answer', should: 'stay checked', actual: changed?.checked, expected: true })
  },
})

export const coffeeStrengthPreset = story({
  intent: 'Put a "Coffee strength" choice in one line, Mild, Medium and Strong, with Strong pre-set as the starting answer',
  template: RadioGroup,
  args: {
    name: 'strength',
    legend: 'Coffee strength',
    layout: 'horizontal',
    value: 'strong',
    options: [
      { value: 'mild', label: 'Mild' },
      { value: 'medium', label: 'Medium' },
      { value: 'strong', label: 'Strong' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const strong = await findByAttribute('id', 'strength-strong')
    assert({ given: 'a preset strength', should: 'check Strong', actual: strong?.checked, expected: true })
  },
})

export const pickupStoreAirportClosed = story({
  intent: 'A compulsory "Pickup store" choice between Downtown, Riverside and Airport, nothing answered yet, where Airport is out of action and marked "Closed for renovation"',
  template: RadioGroup,
  args: {
    name: 'pickup-store',
    legend: 'Pickup store',
    required: true,
    options: [
      { value: 'downtown', label: 'Downtown' },
      { value: 'riverside', label: 'Riverside' },
      { value: 'airport', label: 'Airport', hint: 'Closed for renovation', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const airport = await findByAttribute('id', 'pickup-store-airport')
    assert({ given: 'a store under renovation', should: 'be disabled', actual: airport?.disabled, expected: true })
  },
})
